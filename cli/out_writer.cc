// Writes the --out folder; see out_writer.h.
#include "cli/out_writer.h"

#include <filesystem>
#include <fstream>

#include "confirm/ds_config.h"
#include "confirm/fsdp_config.h"

namespace dsplan::cli {
namespace fs = std::filesystem;
namespace {

bool write_file(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}

std::string join_words(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + shell_quote(w);
  return s;
}

}  // namespace

Expected<bool> write_out_dir(const std::string& dir, const EstimatePlan& plan) {
  std::error_code ec;
  const fs::path target(dir);
  if (fs::exists(target, ec) && !fs::is_empty(target, ec) && !fs::exists(target / "plan.json", ec))
    return Diagnostic{dir, "", "output folder exists and is not an earlier dsplan --out folder",
                      "choose a new or empty folder for --out"};
  const fs::path tmp = target.string() + ".dsplan-tmp";
  fs::remove_all(tmp, ec);
  if (!fs::create_directories(tmp, ec) || ec)
    return Diagnostic{dir, "", "cannot create output folder: " + ec.message(), "check the path and permissions"};
  bool ok = write_file(tmp / "plan.json", plan.json.dump(2) + "\n");
  int rank = 0;
  for (const auto& e : plan.result.configs) {
    if (!e.fits || !e.reasons.empty()) continue;
    const std::string name = std::to_string(++rank) + "_" + experiment_name(e.cfg);
    const fs::path d = tmp / name;
    fs::create_directories(d, ec);
    const std::string cfg_path = (target / name / "ds_config.json").string();
    ok = ok && write_file(d / "ds_config.json", make_ds_config(e.cfg, plan.request.model).dump(2) + "\n");
    ok = ok && write_file(d / "launch.sh",
                          "#!/bin/sh\n# Replace train.py and its arguments with your training script.\n" +
                              deepspeed_launch_command(e.cfg, plan.request.cluster, "train.py", {}, cfg_path) + "\n");
    ok = ok && write_file(d / "megatron_args.txt", join_words(megatron_args(e.cfg, plan.request.model)) + "\n");
    std::string notes;
    if (e.cfg.framework == Framework::fsdp) {
      // The run dsplan priced is PyTorch FSDP: its settings and a torchrun command. The
      // DeepSpeed files stay as the ZeRO equivalent.
      const std::string fsdp_path = (target / name / "fsdp_config.json").string();
      ok = ok && write_file(d / "fsdp_config.json", make_fsdp_config(e.cfg).dump(2) + "\n");
      ok = ok && write_file(d / "torchrun.sh",
                            "#!/bin/sh\n# Replace train.py with your FSDP training script; it reads the settings "
                            "from fsdp_config.json.\n" +
                                torchrun_launch_command(e.cfg, plan.request.cluster, "train.py", fsdp_path) + "\n");
      notes += "framework fsdp: fsdp_config.json and torchrun.sh describe the run that was priced; "
               "ds_config.json and launch.sh are DeepSpeed's ZeRO-" + std::to_string(e.cfg.zero_stage) +
               " equivalent, megatron_args.txt gives the model shape in Megatron's flags\n";
    }
    if (e.cfg.framework == Framework::ddp)
      notes += std::string("framework ddp: the run priced is torch DistributedDataParallel under autocast") +
               (e.cfg.zero_stage == 1
                    ? ", its optimizer wrapped in torch.distributed.optim.ZeroRedundancyOptimizer "
                      "(optimizer state sharded, parameters broadcast after each step)"
                    : "") +
               "; ds_config.json and launch.sh are DeepSpeed's ZeRO-" + std::to_string(e.cfg.zero_stage) +
               " equivalent, megatron_args.txt gives the model shape in Megatron's flags\n";
    for (const auto& n : ds_config_notes(e.cfg)) notes += n + "\n";
    if (!notes.empty()) ok = ok && write_file(d / "NOTES.txt", notes);
    ok = ok && write_file(d / "prediction.json", config_to_json(e).dump(2) + "\n");
  }
  if (!ok) {
    fs::remove_all(tmp, ec);
    return Diagnostic{dir, "", "could not write the output files", "check free space and permissions"};
  }
  fs::remove_all(target, ec);
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove_all(tmp, ec);
    return Diagnostic{dir, "", "could not move the output into place: " + ec.message(), ""};
  }
  return true;
}

}  // namespace dsplan::cli
