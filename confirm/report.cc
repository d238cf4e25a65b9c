// Confirm's tables and output files (see report.h).
#include "confirm/report.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "confirm/command.h"

namespace fs = std::filesystem;

namespace dsplan {
namespace {

std::string num(double v, const char* f = "%.4g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// A signed percentage error, with 3 significant digits once it is too large for one decimal.
std::string err_pct(double pred, double meas) {
  if (!(meas > 0 && pred > 0)) return "-";
  const double e = (pred - meas) / meas * 100;
  return num(e, std::fabs(e) < 1e4 ? "%+.1f" : "%+.3g");
}

std::string row(const std::vector<std::string>& cells) {
  std::string s = "|";
  for (const auto& c : cells) s += " " + c + " |";
  return s + "\n";
}

std::string duration(double seconds) {
  const long whole = static_cast<long>(seconds);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld.%06ld", whole / 3600, whole / 60 % 60, whole % 60,
                static_cast<long>((seconds - whole) * 1e6));
  return buf;
}

// Where an ok run's measured / predicted step falls against the band estimate stated for its
// regime: inside it the run behaved like the published and real runs of its kind; outside
// it this cluster or workload differs from them (docs/accuracy.md, "Accuracy evidence by
// regime").
std::string band_note(const Prediction& p, double measured_step, double measured_gib) {
  std::string note;
  if (p.band_low > 0 && p.step_s > 0 && measured_step > 0) {
    const double ratio = measured_step / p.step_s;
    const bool inside = ratio >= p.band_low && ratio <= p.band_high;
    note = "measured " + num(ratio, "%.2f") + "x the predicted step, " + (inside ? "inside" : "outside") +
           " the " + num(p.band_low, "%.2f") + "-" + num(p.band_high, "%.2f") +
           " of published and real runs like it" + (p.regime.empty() ? "" : " (" + p.regime + ")");
  }
  if (p.memory_band_low > 0 && p.allocated_gib > 0 && measured_gib > 0) {
    const double ratio = measured_gib / p.allocated_gib;
    const bool inside = ratio >= p.memory_band_low && ratio <= p.memory_band_high;
    note += std::string(note.empty() ? "" : "; ") + "peak memory " + num(ratio, "%.2f") + "x predicted, " +
            (inside ? "inside" : "outside") + " its runs' " + num(p.memory_band_low, "%.2f") + "-" +
            num(p.memory_band_high, "%.2f");
  }
  return note;
}

std::string join_notes(const std::string& a, const std::string& b) {
  return a.empty() ? b : b.empty() ? a : a + "; " + b;
}

}  // namespace

std::string results_table(const ConfirmReport& rep) {
  std::string s = row({"#", "experiment", "outcome", "pred samples/s", "meas samples/s", "err %",
                       "pred step s", "meas step s", "err %", "pred mem GiB", "meas peak GiB", "err %",
                       "corrected samples/s", "note"});
  s += row({"-:", ":-", ":-", "-:", "-:", "-:", "-:", "-:", "-:", "-:", "-:", "-:", "-:", ":-"});
  for (size_t i = 0; i < rep.runs.size(); ++i) {
    const auto& r = rep.runs[i];
    const Prediction& p = r.cand.pred;
    const bool ok = r.result.cls.outcome == Outcome::ok;
    const Measured& m = r.result.measured;
    // Measured step time from throughput: unambiguous, whatever unit "latency" is in.
    const double step = ok ? static_cast<double>(r.cand.cfg.global_batch()) / m.throughput : 0;
    const bool mem = ok && m.peak_memory_gib >= 0;
    s += row({std::to_string(i + 1), r.cand.name, outcome_name(r.result.cls.outcome), num(p.samples_per_s),
              ok ? num(m.throughput) : "-", ok ? err_pct(p.samples_per_s, m.throughput) : "-", num(p.step_s),
              ok ? num(step) : "-", ok ? err_pct(p.step_s, step) : "-", num(p.allocated_gib, "%.2f"),
              mem ? num(m.peak_memory_gib, "%.2f") : "-",
              mem ? err_pct(p.allocated_gib, m.peak_memory_gib) : "-",
              r.corrected_samples_per_s > 0 ? num(r.corrected_samples_per_s) : "-",
              join_notes(r.result.cls.overflow_skips > 0
                             ? std::to_string(r.result.cls.overflow_skips) + " fp16 overflow steps skipped"
                             : "",
                         ok ? band_note(p, step, mem ? m.peak_memory_gib : 0) : "")});
  }
  return s;
}

std::string autotuner_summary(const ConfirmReport& rep) {
  struct Space { int n = 0; int best = -1; };
  std::map<std::string, Space> spaces;  // "z0".."z3", then "global"
  auto consider = [&](Space& sp, int i) {
    ++sp.n;
    const auto& r = rep.runs[i].result;
    if (r.cls.outcome == Outcome::ok &&
        (sp.best < 0 || r.measured.throughput > rep.runs[sp.best].result.measured.throughput))
      sp.best = i;
  };
  Space global;
  for (size_t i = 0; i < rep.runs.size(); ++i) {
    std::string space = "z";
    space += std::to_string(rep.runs[i].cand.cfg.zero_stage);
    consider(spaces[space], static_cast<int>(i));
    consider(global, static_cast<int>(i));
  }
  std::string s = row({"tuning_space", "num_experiments", "best_metric_val", "best_exp_name",
                       "predicted_metric_val", "error_pct"});
  s += row({":-----------", "--------------:", "--------------:", ":-------------", "-------------------:",
            "--------:"});
  auto line = [&](const std::string& name, const Space& sp) {
    if (sp.best < 0) return row({name, std::to_string(sp.n), "0", "-", "-", "-"});
    const auto& r = rep.runs[sp.best];
    const double meas = r.result.measured.throughput, pred = r.cand.pred.samples_per_s;
    return row({name, std::to_string(sp.n), num(meas, "%.6g"), r.cand.name, num(pred, "%.6g"),
                err_pct(pred, meas)});
  };
  for (const auto& [name, sp] : spaces) s += line(name, sp);
  s += line("global", global);
  s += "Tuning completed in " + duration(rep.seconds) +
       ". Total number of experiments: " + std::to_string(rep.runs.size()) + ".\n";
  return s;
}

std::string failure_summary(const ConfirmReport& rep) {
  std::string s = "No configuration succeeded (" + std::to_string(rep.runs.size()) + " run):\n";
  for (const auto& r : rep.runs) {
    s += "  " + r.cand.name + ": " + outcome_name(r.result.cls.outcome) +
         (r.result.cls.reason.empty() ? "" : " - " + r.result.cls.reason) + "\n";
    if (!r.result.cls.tail.empty()) {
      std::string tail = r.result.cls.tail;
      // A Python traceback is the workload's, not dsplan's: its last line (the exception)
      // says what went wrong; the whole trace stays in the log named below.
      if (const size_t tb = tail.find("Traceback (most recent call last):"); tb != std::string::npos) {
        while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
        const size_t nl = tail.rfind('\n');
        tail = "the workload raised " + (nl == std::string::npos ? tail : tail.substr(nl + 1));
      }
      for (size_t p = 0; (p = tail.find('\n', p)) != std::string::npos; p += 5) tail.replace(p, 1, "\n    ");
      s += "    " + tail + "\n";
    }
    s += "    logs: " + r.exp.dir + "/stderr.log\n";
  }
  return s;
}

std::vector<std::string> optimal_command(const ConfirmReport& rep, const std::string& optimal_ds_config) {
  if (rep.best < 0) return {};
  std::vector<std::string> argv = rep.runs[rep.best].exp.argv;
  for (auto& w : argv) {
    if (w == rep.runs[rep.best].exp.ds_config_path) w = optimal_ds_config;
    const std::string suffix = "=" + rep.runs[rep.best].exp.ds_config_path;
    if (w.size() > suffix.size() && w.compare(w.size() - suffix.size(), suffix.size(), suffix) == 0)
      w = w.substr(0, w.size() - suffix.size()) + "=" + optimal_ds_config;
  }
  return argv;
}

Expected<bool> write_outputs(const ConfirmReport& rep, const std::string& results_dir) {
  const fs::path dir(results_dir);
  {
    std::ofstream out(dir / "summary.txt");
    out << autotuner_summary(rep) << "\n" << results_table(rep);
    if (!out) return Diagnostic{(dir / "summary.txt").string(), "", "cannot write", ""};
  }
  const fs::path ds = dir / "ds_config_optimal.json", cmd = dir / "cmd_optimal.txt";
  std::error_code ec;
  if (rep.best < 0) {
    fs::remove(ds, ec);
    fs::remove(cmd, ec);
    return true;
  }
  Json best = rep.runs[rep.best].exp.ds_config;
  best.erase("autotuning");  // the real training must not stop after the profile steps
  auto w = write_json_file(ds.string(), best);
  if (!w) return w.errors();
  std::ofstream out(cmd);
  out << shell_join(optimal_command(rep, ds.string())) << "\n";
  if (!out) return Diagnostic{cmd.string(), "", "cannot write", ""};
  return true;
}

}  // namespace dsplan
