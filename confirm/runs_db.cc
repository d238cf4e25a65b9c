// JSON runs database for the residual model (see runs_db.h).
#include "confirm/runs_db.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/json/model_json.h"

namespace dsplan {
namespace {

Json measured_to_json(const Measured& m) {
  Json j = {{"throughput", m.throughput}, {"latency", m.latency}, {"FLOPS_per_gpu", m.flops_per_gpu}};
  if (m.peak_memory_gib >= 0) j["peak_memory_GiB"] = m.peak_memory_gib;
  return j;
}

std::string model_name(const Json& model) {
  return model.is_object() && model.contains("name") && model["name"].is_string()
             ? model["name"].get<std::string>() : std::string();
}

Expected<RunRecord> record_from_json(const Json& j, const std::string& file, size_t i) {
  const std::string at = "/runs/" + std::to_string(i);
  if (!j.is_object() || !j.contains("outcome") || !j["outcome"].is_string())
    return Diagnostic{file, at, "not a run record", "delete the file to start a new database"};
  RunRecord r;
  auto outcome = parse_outcome(j["outcome"].get<std::string>());
  if (!outcome) return Diagnostic{file, at + "/outcome", "unknown outcome", "ok, oom, timeout, failed"};
  r.outcome = *outcome;
  r.cluster = j.value("cluster", "");
  r.name = j.value("name", "");
  r.reason = j.value("reason", "");
  r.model = j.value("model", Json::object());
  r.config = j.value("config", Json::object());
  r.overflow_skips = j.value("fp16_overflow_skips", 0);
  if (j.contains("measured")) {
    auto m = parse_metrics(j["measured"].dump());
    if (m) r.measured = *m;
  }
  return r;
}

}  // namespace

Expected<RunsDb> RunsDb::load(const std::string& path) {
  RunsDb db;
  db.path_ = path;
  if (!std::filesystem::exists(path)) return db;
  auto text = read_text_file(path);
  if (!text) return text.errors();
  auto j = parse_json_text(*text, path);
  if (!j) return j.errors();
  if (!j->is_object() || !j->contains("runs") || !(*j)["runs"].is_array())
    return Diagnostic{path, "/runs", "not a dsplan runs database", "delete the file to start a new one"};
  Diagnostics errs;
  const Json& runs = (*j)["runs"];
  for (size_t i = 0; i < runs.size(); ++i) {
    auto r = record_from_json(runs[i], path, i);
    if (r) db.runs_.push_back(*r);
    else errs.insert(errs.end(), r.errors().begin(), r.errors().end());
  }
  if (!errs.empty()) return errs;
  return db;
}

Expected<bool> RunsDb::save() const {
  Json runs = Json::array();
  for (const auto& r : runs_) {
    Json j = {{"cluster", r.cluster}, {"name", r.name}, {"model", r.model}, {"config", r.config},
              {"outcome", outcome_name(r.outcome)}, {"reason", r.reason}};
    if (r.outcome == Outcome::ok) j["measured"] = measured_to_json(r.measured);
    if (r.overflow_skips > 0) j["fp16_overflow_skips"] = r.overflow_skips;
    runs.push_back(j);
  }
  const Json doc = {{"version", 1}, {"runs", runs}};
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp);
    out << doc.dump(2) << "\n";
    if (!out) return Diagnostic{tmp, "", "cannot write the runs database", ""};
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path_, ec);
  if (ec) return Diagnostic{path_, "", "cannot write the runs database: " + ec.message(), ""};
  return true;
}

void RunsDb::upsert(const RunRecord& r) {
  for (auto& old : runs_) {
    if (old.cluster == r.cluster && old.name == r.name && model_name(old.model) == model_name(r.model)) {
      old = r;
      return;
    }
  }
  runs_.push_back(r);
}

void RunsDb::training_set(const std::string& cluster, std::vector<FeatureRow>& rows,
                          std::vector<float>& targets, std::vector<std::string>* left_out) const {
  for (const auto& r : runs_) {
    if (r.cluster != cluster || r.outcome != Outcome::ok || !(r.measured.throughput > 0)) continue;
    if (r.overflow_skips > 0) continue;  // the profiled steps may have skipped the optimizer
    auto model = parse_model_json(r.model, path_);
    auto cand = parse_candidate(r.config, path_, "/runs");
    if (!model || !cand) continue;  // a record this version cannot read teaches nothing
    auto leave_out = [&](const std::string& why) {
      if (left_out) left_out->push_back(r.name + ": " + why);
    };
    if (auto bad = measurement_problem(r.measured, cand->cfg.global_batch()); !bad.empty()) {
      leave_out(bad);  // written by an older version that did not check it
      continue;
    }
    const double ratio = r.measured.throughput / cand->pred.samples_per_s;
    if (!(ratio >= kMinTrainingRatio && ratio <= kMaxTrainingRatio)) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "measured %.4g samples/s is %.3g x the predicted %.4g, outside [%g, %g]",
                    r.measured.throughput, ratio, cand->pred.samples_per_s, kMinTrainingRatio,
                    kMaxTrainingRatio);
      leave_out(buf);
      continue;
    }
    rows.push_back(residual_features(cand->cfg, *model, cand->pred));
    targets.push_back(static_cast<float>(std::log(r.measured.throughput / cand->pred.samples_per_s)));
  }
}

}  // namespace dsplan
