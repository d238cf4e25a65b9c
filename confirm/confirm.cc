// The confirm loop: selection, running, learning (see confirm.h).
#include "confirm/confirm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "confirm/residual_model.h"
#include "confirm/runs_db.h"

namespace fs = std::filesystem;

namespace dsplan {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// True when `c` differs from the OOM'd `o` only by a micro-batch at least as large (and the
// accumulation steps): it needs at least as much memory, so it very likely OOMs too.
bool contains_oom(const TrainConfig& c, const TrainConfig& o) {
  return c.zero_stage == o.zero_stage && c.tp == o.tp && c.pp == o.pp && c.vpp == o.vpp &&
         c.checkpointing == o.checkpointing && c.recompute_layers == o.recompute_layers &&
         c.flash_attention == o.flash_attention && c.sequence_parallel == o.sequence_parallel &&
         c.offload == o.offload && c.precision == o.precision && c.fp8 == o.fp8 &&
         c.fp8_recipe == o.fp8_recipe && c.cpu_offload_layers == o.cpu_offload_layers &&
         c.ds_partition_activations == o.ds_partition_activations &&
         c.ds_cpu_checkpointing == o.ds_cpu_checkpointing && c.framework == o.framework &&
         c.optimizer == o.optimizer && c.seq_len == o.seq_len && c.micro_batch >= o.micro_batch;
}

class Selector {
 public:
  Selector(const Plan& p, bool adaptive) : plan_(p), adaptive_(adaptive), done_(p.candidates.size()) {}

  // Index of the next candidate to run, or -1.
  int next(const std::vector<double>& corrected) const {
    int best = -1;
    double best_score = 0;
    bool best_suspect = true;
    for (size_t i = 0; i < done_.size(); ++i) {
      if (done_[i]) continue;
      if (!adaptive_) return static_cast<int>(i);  // plan order
      bool suspect = false;
      for (const auto* o : ooms_) suspect = suspect || contains_oom(plan_.candidates[i].cfg, *o);
      double score = corrected[i] > 0 ? corrected[i] : plan_.candidates[i].pred.samples_per_s;
      if (best < 0 || (best_suspect && !suspect) || (suspect == best_suspect && score > best_score)) {
        best = static_cast<int>(i);
        best_score = score;
        best_suspect = suspect;
      }
    }
    return best;
  }
  void mark(int i, Outcome o) {
    done_[i] = true;
    if (o == Outcome::oom) ooms_.push_back(&plan_.candidates[i].cfg);
  }
  bool done(size_t i) const { return done_[i]; }

 private:
  const Plan& plan_;
  bool adaptive_;
  std::vector<bool> done_;
  std::vector<const TrainConfig*> ooms_;
};

// Adds `note` to the report once (learn() runs after every successful run).
void note_once(ConfirmReport& rep, const std::string& note) {
  if (std::find(rep.notes.begin(), rep.notes.end(), note) == rep.notes.end()) rep.notes.push_back(note);
}

// Retrains the residual model on every successful run for this cluster and returns the
// corrected throughput of each candidate (0 when there is no model yet). A model that
// would correct a candidate beyond [kMinResidualFactor, kMaxResidualFactor] is neither
// saved nor used (estimate would refuse it).
std::vector<double> learn(const Plan& plan, const RunsDb& db, const std::string& path,
                          ConfirmReport& rep) {
  std::vector<double> corrected(plan.candidates.size(), 0.0);
  std::vector<FeatureRow> rows;
  std::vector<float> targets;
  std::vector<std::string> left_out;
  db.training_set(plan.cluster_key(), rows, targets, &left_out);
  for (const auto& why : left_out) note_once(rep, "residual model: not learned from " + why);
  if (rows.size() < 2) return corrected;  // one run only tells the level, not the shape
  auto model = ResidualModel::train(rows, targets, plan.cluster_key());
  std::vector<FeatureRow> cand_rows;
  for (const auto& c : plan.candidates) cand_rows.push_back(residual_features(c.cfg, plan.model, c.pred));
  auto logs = model ? model->predict(cand_rows) : Expected<std::vector<double>>(model.errors());
  for (size_t i = 0; logs && i < logs->size(); ++i)
    if (auto bad = residual_factor_problem((*logs)[i]); !bad.empty()) {
      note_once(rep,
                "residual model: gives " + bad + " for " + plan.candidates[i].name + "; not saved or used");
      return corrected;
    }
  auto saved = logs ? model->save(path) : Expected<bool>(logs.errors());
  if (!logs || !saved) {
    const auto& errs = !logs ? logs.errors() : saved.errors();
    note_once(rep, "residual model: " + errs.front().to_string());
    return corrected;
  }
  for (size_t i = 0; i < corrected.size(); ++i)
    corrected[i] = plan.candidates[i].pred.samples_per_s * std::exp((*logs)[i]);
  rep.training_runs = static_cast<int>(rows.size());
  rep.residual_path = path;
  return corrected;
}

// A signed percentage, with 3 significant digits once it is too large for one decimal.
std::string pct(double v) { return std::fabs(v) < 1e4 ? fmt("%+.1f", v) : fmt("%+.3g", v); }

std::string progress_line(int k, int total, const ExperimentRecord& r) {
  const auto& out = r.result;
  std::string s = "[";
  s += std::to_string(k) + "/" + std::to_string(total) + "] " + r.cand.name + ": " +
       outcome_name(out.cls.outcome);
  if (out.cls.outcome == Outcome::ok) {
    const double pred = r.cand.pred.samples_per_s, meas = out.measured.throughput;
    s += ", " + fmt("%.4g", meas) + " samples/s measured, " + fmt("%.4g", pred) + " predicted (" +
         pct((pred - meas) / meas * 100) + "% error)";
    if (out.cls.overflow_skips > 0)
      s += "; " + std::to_string(out.cls.overflow_skips) +
           " fp16 overflow steps skipped (a profiled step may have had no optimizer update)";
  } else if (!out.cls.reason.empty()) {
    s += ", " + out.cls.reason;
  }
  s += out.reused ? " (reused)" : ", " + fmt("%.1f", out.seconds) + " s";
  return s;
}

}  // namespace

Expected<ConfirmReport> run_confirm(const Plan& plan, const LaunchSpec& launch, const ConfirmOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  auto say = [&](const std::string& line) { if (o.progress) o.progress(line); };
  std::error_code ec;
  for (const auto& d : {o.results_dir, o.exps_dir}) {
    fs::create_directories(d, ec);
    if (ec) return Diagnostic{d, "", "cannot create directory: " + ec.message(), ""};
  }
  const fs::path results(o.results_dir);
  auto loaded = RunsDb::load(o.runs_db_path.empty() ? (results / "dsplan_runs.json").string() : o.runs_db_path);
  if (!loaded) return loaded.errors();
  RunsDb db = std::move(loaded).value();
  const std::string model_path =
      o.residual_path.empty() ? (results / "residual_model.json").string() : o.residual_path;

  ConfirmReport rep;
  std::vector<double> corrected = learn(plan, db, model_path, rep);
  Selector sel(plan, o.adaptive);
  const int total = std::min<int>(o.top, static_cast<int>(plan.candidates.size()));
  const ProcessLimits limits{o.timeout_s, o.kill_grace_s, o.cancel};
  for (int k = 1; k <= total; ++k) {
    if (o.cancel && o.cancel->load()) { rep.interrupted = true; break; }
    const int i = sel.next(corrected);
    if (i < 0) break;
    ExperimentRecord r{plan.candidates[i], make_experiment(plan.candidates[i], plan, launch, o.results_dir), {},
                       corrected[i]};
    std::optional<ExperimentOutcome> reused = o.overwrite ? std::nullopt : load_result(r.exp);
    if (reused) {
      r.result = *reused;
    } else {
      auto ran = run_experiment(r.exp, r.cand, o.exps_dir, limits);
      if (!ran) return ran.errors();
      r.result = *ran;
    }
    const Outcome out = r.result.cls.outcome;
    sel.mark(i, out);
    say(progress_line(k, total, r));
    rep.runs.push_back(r);
    if (out == Outcome::interrupted) { rep.interrupted = true; break; }
    db.upsert({plan.cluster_key(), r.cand.name, plan.model_json, r.cand.source, out, r.result.cls.reason,
                r.result.measured, r.result.cls.overflow_skips});
    if (auto saved = db.save(); !saved) return saved.errors();
    if (out == Outcome::ok) {
      corrected = learn(plan, db, model_path, rep);
      if (o.adaptive && rep.training_runs > 0)
        say("  residual model retrained on " + std::to_string(rep.training_runs) + " runs");
    }
  }
  for (size_t i = 0; i < rep.runs.size(); ++i) {
    const auto& r = rep.runs[i].result;
    if (r.cls.outcome == Outcome::ok &&
        (rep.best < 0 || r.measured.throughput > rep.runs[rep.best].result.measured.throughput))
      rep.best = static_cast<int>(i);
  }
  for (size_t i = 0; i < plan.candidates.size(); ++i)
    if (!sel.done(i) && corrected[i] > 0) rep.reranked.emplace_back(plan.candidates[i].name, corrected[i]);
  std::stable_sort(rep.reranked.begin(), rep.reranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

std::string find_shipped_file(const std::string& relative) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> places;
  if (!ec) {
    const fs::path dir = exe.parent_path();
    places = {dir / ".." / relative, dir / relative, dir / "../share/dsplan" / relative};
  }
#ifdef DSPLAN_SOURCE_DIR
  places.push_back(fs::path(DSPLAN_SOURCE_DIR) / relative);
#endif
  for (const auto& p : places)
    if (fs::exists(p, ec)) return fs::weakly_canonical(p, ec).string();
  return "";
}

std::string find_reference_workload() {
  const char* env = std::getenv("DSPLAN_TRAIN_SCRIPT");
  if (env && *env) return fs::exists(env) ? std::string(env) : std::string();
  return find_shipped_file("examples/train_gpt.py");
}

}  // namespace dsplan
