// `dsplan calibrate`: measure this machine's GPUs and write a calibration profile;
// `dsplan calibrate fit --records FILE` refits saved raw records on any machine;
// `dsplan calibrate show FILE` prints a profile's fitted figures beside the datasheet.
// Exit status: 0 done, 1 a benchmark failed while running, 2 bad input or no usable GPU
// (built without CUDA, or no CUDA device visible, with the driver's message). Files are
// written to a temporary name and renamed, so an error never leaves a partial file.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "calibrate/bench/plan.h"
#include "calibrate/bench/run.h"
#include "calibrate/gpu_names.h"
#include "calibrate/profile.h"
#include "cli/commands.h"
#include "confirm/classify.h"
#include "confirm/confirm.h"
#include "confirm/process.h"
#include "core/json/model_json.h"
#include "hwdb/hwdb.h"

namespace dsplan::cli {
namespace {

struct CalibrateCli {
  bool quick = false;
  std::string host_probe = "on";
  std::string model, out = "calibration-profile.json", gpu, records;
  std::string show_file;
  std::vector<int> tp{1, 2, 4, 8};
  int seq = 2048;
};

std::string fmt(double v, int prec) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(prec) << v;
  return s.str();
}

// Writes `text` to `path` through a temporary sibling and a rename.
Diagnostics write_atomically(const std::string& path, const std::string& text) {
  std::error_code dir_ec;
  if (std::filesystem::is_directory(path, dir_ec))
    return {{path, "", "is a folder, not a file",
             "give the profile's file path, e.g. " + path + "/profile.json"}};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary);
    f << text;
    if (!f.flush()) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      return {{path, "", "cannot write file", "check that the folder exists and is writable"}};
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();  // before remove() reuses ec
    std::filesystem::remove(tmp, ec);
    return {{path, "", "cannot write file: " + why, "check that the folder exists and is writable"}};
  }
  return {};
}

// The datasheet to fit against: --gpu, else a guess from the device name.
Expected<GpuSpec> datasheet_for(const std::string& gpu_flag, const Provenance& prov) {
  if (!gpu_flag.empty()) return gpu_preset(gpu_flag);
  if (auto guess = gpu_preset_for_device(prov.gpu_name)) return gpu_preset(*guess);
  return Diagnostic{"", "", "cannot tell which datasheet matches the GPU '" + prov.gpu_name + "'",
                    "pass --gpu NAME, one of: " + join(gpu_preset_names())};
}

// Progress bar with ETA on stderr: redrawn in place on a terminal, every ~10% otherwise.
class ProgressBar {
 public:
  void operator()(const Progress& p) {
    const double frac = p.total_cost > 0 ? p.done_cost / p.total_cost : 1.0;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const bool tty = ::isatty(2);
    const int decile = static_cast<int>(frac * 10);
    if (!tty && decile == last_decile_ && !p.label.empty()) return;
    last_decile_ = decile;
    std::string eta = "--:--";
    if (p.done_cost > 0 && elapsed > 0.5) {
      const int s = static_cast<int>(elapsed * (p.total_cost - p.done_cost) / p.done_cost);
      eta = std::to_string(s / 60) + ":" + (s % 60 < 10 ? "0" : "") + std::to_string(s % 60);
    }
    const int width = 30, filled = static_cast<int>(frac * width);
    std::cerr << (tty ? "\r" : "") << "[" << std::string(filled, '#')
              << std::string(width - filled, '-') << "] " << std::setw(3)
              << static_cast<int>(frac * 100) << "%  " << p.done << "/" << p.total << "  ETA "
              << eta << "  " << std::left << std::setw(44) << p.label.substr(0, 44) << std::right
              << (tty && !p.label.empty() ? "" : "\n") << std::flush;
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_ = Clock::now();
  int last_decile_ = -1;
};

std::string pass_command(const CalibrateCli& c) {
  std::string s = c.quick ? "--quick" : "";
  if (!c.model.empty()) s += (s.empty() ? "" : " ") + std::string("--model ") + c.model;
  return s;
}

// Runs calibrate/probes/host_dispatch.py with python3: the host time eager PyTorch spends
// per kernel on this machine. A machine without PyTorch (or the script) keeps the model's
// default, with the reason as a warning in the records.
void probe_host_dispatch(RawRecords& recs) {
  const std::string script = find_shipped_file("calibrate/probes/host_dispatch.py");
  if (script.empty()) {
    recs.warnings.push_back("host dispatch probe skipped: calibrate/probes/host_dispatch.py not found");
    return;
  }
  const CapturedRun run = run_captured({"python3", script}, ProcessLimits{300, 3});
  const ProcessResult& pr = run.result;
  const std::string why = tail_lines(run.err, 1);
  const std::string skipped =
      "host dispatch probe skipped (the model keeps its default host time per kernel): ";
  if (!pr.started) return recs.warnings.push_back(skipped + "cannot run python3: " + pr.error);
  if (!pr.exited || pr.exit_code != 0)
    return recs.warnings.push_back(skipped + (pr.timed_out ? std::string("timed out") : why));
  auto h = parse_host_dispatch(run.out, "host dispatch probe output");
  if (!h) return recs.warnings.push_back(skipped + h.errors().front().message);
  recs.host_dispatch = *h;
}

int run_pass(const CalibrateCli& c) {
  BenchOptions opt;
  opt.quick = c.quick;
  opt.tp = c.tp;
  opt.seq_len = c.seq;
  if (!c.model.empty()) {
    auto m = resolve_model(c.model, read_text_file);
    if (!m) return report(m.errors());
    opt.model = *m;
  }
  if (!c.gpu.empty()) {
    if (auto g = gpu_preset(c.gpu); !g) return report(g.errors());
  }
  auto bench = make_bench();
  auto dev = bench->probe();
  if (!dev) return report(dev.errors());
  const BenchPlan plan = make_plan(opt, *dev);
  ProgressBar bar;
  ProgressFn progress = nullptr;
  if (dev->is_root) progress = [&bar](const Progress& p) { bar(p); };
  auto recs = run_plan(*bench, *dev, plan, pass_command(c), progress);
  if (!recs) {
    report(recs.errors());
    return 1;
  }
  if (!dev->is_root) return 0;
  RawRecords records = *recs;
  if (c.host_probe == "on") probe_host_dispatch(records);
  auto gpu = datasheet_for(c.gpu, records.provenance);
  auto profile = gpu ? fit_records(records, *gpu) : Expected<CalibrationProfile>(gpu.errors());
  if (!profile) {
    // Keep the measurement: the records can be refitted later.
    const std::string raw = c.out + ".records.json";
    Diagnostics errs = profile.errors();
    if (write_atomically(raw, records_to_json(records).dump(1) + "\n").empty())
      errs.push_back({raw, "", "raw records saved", "refit with 'dsplan calibrate fit --records " +
                                                        raw + " --gpu NAME --out FILE'"});
    return report(errs);
  }
  profile.value().source = c.out;
  if (auto errs = write_atomically(c.out, profile_to_json(*profile).dump(1) + "\n"); !errs.empty())
    return report(errs);
  std::cout << "wrote " << c.out << " (" << records.gemm.size() << " GEMMs, " << records.bandwidth.size()
            << " bandwidths, " << records.collectives.size() << " collectives, " << records.overlap.size()
            << " overlap runs"
            << (profile->fitted.host_op_overhead
                    ? ", host " + fmt(in_us(*profile->fitted.host_op_overhead), 1) + " us per kernel"
                    : std::string())
            << ")\n";
  for (const auto& w : records.warnings) std::cout << "warning: " << w << "\n";
  return 0;
}

// Raw records, or a whole profile whose records are refitted.
Expected<RawRecords> read_records(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return text.errors();
  auto j = parse_json_text(*text, path);
  if (!j) return j.errors();
  if (j->is_object() && j->contains("format")) {
    auto p = load_profile(*text, path);
    if (!p) return p.errors();
    return p->records;
  }
  return parse_records(*j, path);
}

int run_fit(const CalibrateCli& c) {
  auto recs = read_records(c.records);
  if (!recs) return report(recs.errors());
  auto gpu = datasheet_for(c.gpu, recs->provenance);
  if (!gpu) return report(gpu.errors());
  auto profile = fit_records(*recs, *gpu);
  if (!profile) {
    Diagnostics errs = profile.errors();
    for (auto& e : errs) e.file = c.records;
    return report(errs);
  }
  profile.value().source = c.out;
  if (auto errs = write_atomically(c.out, profile_to_json(*profile).dump(1) + "\n"); !errs.empty())
    return report(errs);
  std::cout << "wrote " << c.out << "\n";
  return 0;
}

void print_provenance(const CalibrationProfile& p) {
  const Provenance& v = p.records.provenance;
  if (v.kind != "measurement") std::cout << "NOTE     " << v.kind << "\n";
  std::cout << "measured " << v.gpu_name << " x" << v.gpu_count << " (" << v.nodes << " node"
            << (v.nodes > 1 ? "s" : "") << ", " << v.sm_count << " SMs) on " << v.host << ", "
            << v.date << "\n         driver " << v.driver << ", CUDA " << v.cuda_runtime
            << ", cuBLAS " << v.cublas << ", NCCL " << v.nccl << ", dsplan " << v.dsplan_version
            << " (" << v.git_hash << ")" << (v.command.empty() ? "" : ", options " + v.command)
            << "\n";
  std::cout << "datasheet " << p.datasheet.gpu << " (" << p.datasheet.sm_count << " SMs)\n\n";
}

void print_gemm(const CalibrationProfile& p) {
  const FittedParams& f = p.fitted;
  std::cout << std::left << std::setw(7) << "GEMM" << std::right << std::setw(18) << "datasheet TF/s"
            << std::setw(16) << "fitted frac" << std::setw(17) << "fitted TF/s" << std::setw(24)
            << "best measured TF/s" << std::setw(9) << "shapes" << "\n";
  for (int d = 0; d < 4; ++d) {
    if (!f.gemm[d]) continue;
    const double peak = p.datasheet.peak_TFLOPS[d];
    const auto& g = *f.gemm[d];
    std::cout << std::left << std::setw(7) << name(GemmDtype(d)) << std::right << std::setw(18)
              << fmt(peak, 1) << std::setw(16) << fmt(g.peak_fraction, 3) << std::setw(17)
              << fmt(g.peak_fraction * peak, 1) << std::setw(16) << fmt(g.best_TFLOPS, 1) << " ("
              << fmt(peak > 0 ? g.best_TFLOPS / peak : 0, 3) << ")" << std::setw(9) << g.samples
              << "\n";
  }
  std::cout << "GEMM model: k_half " << fmt(f.gemm_k_half, 1) << ", kernel overhead "
            << fmt(in_us(f.kernel_overhead), 2) << " us, RMS relative error "
            << fmt(100 * f.gemm_rms_rel_error, 1) << "%\n";
  if (!gemm_fit_usable(f))
    std::cout << "GEMM fit not used by estimate: RMS above " << fmt(100 * kMaxUsableGemmRms, 0)
              << "% or a fraction above the datasheet peak; the datasheet GEMM fractions stay\n";
}

void print_bandwidth(const CalibrationProfile& p) {
  const FittedParams& f = p.fitted;
  if (f.hbm_fraction)
    std::cout << "HBM   datasheet " << fmt(p.datasheet.hbm_GBps, 0) << " GB/s, measured "
              << fmt(f.hbm_GBps, 0) << " GB/s (" << fmt(*f.hbm_fraction, 3) << ")\n";
  if (f.pcie_fraction)
    std::cout << "PCIe  datasheet " << fmt(p.datasheet.pcie_GBps, 2) << " GB/s, measured H2D "
              << fmt(f.pcie_h2d_GBps, 2) << " / D2H " << fmt(f.pcie_d2h_GBps, 2) << " GB/s ("
              << fmt(*f.pcie_fraction, 3) << ")\n";
  for (const auto& o : p.records.overlap)
    std::cout << "GEMM beside " << name(o.collective) << " (" << name(o.scope) << ", "
              << o.ranks << " ranks): " << fmt(o.gemm_alone_us, 0) << " us alone, "
              << fmt(o.gemm_beside_us, 0) << " us beside (loss " << fmt(o.loss, 3) << ")"
              << (o.comm_us >= o.gemm_beside_us ? "" : ", not covered: not fitted") << "\n";
  if (f.overlap_compute_loss)
    std::cout << "overlap compute loss " << fmt(*f.overlap_compute_loss, 3)
              << " (default 0.19; docs/model.md §4.6)\n";
  if (const auto& h = p.records.host_dispatch)
    std::cout << "host dispatch (" << h->framework << ", " << h->precision
              << "): " << fmt(h->us_per_kernel, 1) << " us per kernel, " << fmt(h->kernels_per_step, 0)
              << " kernels in " << fmt(h->step_us / 1000, 2) << " ms, GPU busy "
              << fmt(h->gpu_busy_us_per_step / 1000, 2) << " ms"
              << (p.fitted.host_op_overhead ? "" : " (GPU-bound probe: not fitted)") << "\n";
  for (const auto& w : p.records.warnings) std::cout << "warning: " << w << "\n";
}

void print_collectives(const CalibrationProfile& p) {
  if (p.fitted.collectives.empty()) return;
  std::cout << "\ncollectives: t(S) = latency + S * bus_factor / busbw\n"
            << std::left << std::setw(16) << "collective" << std::setw(12) << "scope" << std::right
            << std::setw(7) << "ranks" << std::setw(13) << "latency us" << std::setw(13)
            << "busbw GB/s" << std::setw(10) << "rms err" << "\n";
  for (const auto& c : p.fitted.collectives)
    std::cout << std::left << std::setw(16) << name(c.collective) << std::setw(12) << name(c.scope)
              << std::right << std::setw(7) << c.ranks << std::setw(13) << fmt(in_us(c.fit.latency), 1)
              << std::setw(13) << fmt(in_GBps(c.fit.busbw), 1) << std::setw(9)
              << fmt(100 * c.rms_rel_error, 1) << "%\n";
}

int run_show(const CalibrateCli& c) {
  auto text = read_text_file(c.show_file);
  if (!text) return report(text.errors());
  auto p = load_profile(*text, c.show_file);
  if (!p) return report(p.errors());
  std::cout << "profile  " << c.show_file << "\n";
  print_provenance(*p);
  print_gemm(*p);
  print_bandwidth(*p);
  print_collectives(*p);
  return 0;
}

}  // namespace

void add_calibrate(CLI::App& app, int& exit_code) {
  auto c = std::make_shared<CalibrateCli>();
  auto* sub = app.add_subcommand(
      "calibrate", "Measure GEMM, HBM, PCIe and NCCL performance on this machine's GPUs and "
                   "write a calibration profile for 'estimate --profile'");
  sub->add_flag("--quick", c->quick, "A shorter pass (under a minute)");
  sub->add_option("--host-probe", c->host_probe,
                  "Measure eager PyTorch's host time per kernel with python3 (on, default; off)")
      ->check(CLI::Validator(
          [](std::string& v) {
            return v == "on" || v == "off" ? std::string() : "invalid value \"" + v + "\" (on or off)";
          },
          "", "on-off"));
  sub->add_option("--model", c->model, "Also measure this model's GEMM shapes (preset or JSON file)");
  sub->add_option("--tp", c->tp, "TP degrees for the model's GEMM shapes")
      ->delimiter(',')
      ->check(number_check(true, 1, 1024, "TP degrees, integers in [1, 1024]"));
  sub->add_option("--seq", c->seq, "Sequence length for the model's GEMM shapes")
      ->check(number_check(true, 1, 1 << 20, "tokens, an integer in [1, 1048576]"));
  // A profile path may not be empty (write_atomically would fail without naming the flag).
  const CLI::Validator file_path(
      [](std::string& v) {
        return v.empty() ? std::string("needs a file path, e.g. profile.json") : std::string();
      },
      "", "file-path");
  sub->add_option("--out", c->out, "Profile to write")->capture_default_str()->check(file_path);
  sub->add_option("--gpu", c->gpu, "Datasheet GPU preset to fit against (default: from the device name)");
  sub->require_subcommand(0, 1);

  auto* fit = sub->add_subcommand("fit", "Refit a profile from saved raw records (no GPU needed)");
  fit->add_option("--records", c->records, "Raw records JSON (or a profile whose records to refit)")->required();
  fit->add_option("--gpu", c->gpu, "Datasheet GPU preset (default: from the records' device name)");
  fit->add_option("--out", c->out, "Profile to write")->required()->check(file_path);
  fit->callback([c, &exit_code] { exit_code = run_fit(*c); });

  auto* show = sub->add_subcommand("show", "Print a profile's fitted figures beside the datasheet");
  show->add_option("file", c->show_file, "Calibration profile")->required();
  show->callback([c, &exit_code] { exit_code = run_show(*c); });

  sub->callback([c, sub, &exit_code] {
    if (!sub->get_subcommands().empty()) return;  // fit or show ran
    exit_code = run_pass(*c);
  });
}

}  // namespace dsplan::cli
