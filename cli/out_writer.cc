// Writes the --out folder; see out_writer.h.
#include "cli/out_writer.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "confirm/ds_config.h"
#include "confirm/fsdp_config.h"
#include "core/json_reader.h"

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

// What an earlier `--out` wrote: plan.json (an estimate --json document) and one folder per
// configuration named "<rank>_<experiment>" holding only the files below.
bool is_config_file(const std::string& f) {
  static const std::set<std::string> names{"ds_config.json",   "launch.sh",   "megatron_args.txt",
                                           "fsdp_config.json", "torchrun.sh", "NOTES.txt",
                                           "prediction.json"};
  return names.count(f) > 0;
}

// Exactly the document `estimate --json` writes: these keys and no others, with their types.
bool is_plan_json(const fs::path& p) {
  auto text = read_text_file(p.string());
  if (!text) return false;
  auto j = parse_json_text(*text, p.string());
  if (!j || !j->is_object() || j->size() != 6) return false;
  const Json& d = *j;
  return d.contains("assumptions") && d["assumptions"].is_array() && d.contains("configs") &&
         d["configs"].is_array() && d.contains("efficiency_source") && d["efficiency_source"].is_string() &&
         d.contains("hardware") && d["hardware"].is_object() && d.contains("model") &&
         d["model"].is_object() && d.contains("search") && d["search"].is_object();
}

// "<rank>_<experiment name>" as write_out_dir names a configuration's folder.
bool is_config_folder_name(const std::string& name) {
  static const std::regex re(R"([1-9][0-9]*_[A-Za-z0-9_.=+-]+)");
  return std::regex_match(name, re);
}

// The entries of an existing folder that an earlier `--out` did not write (up to 3).
std::vector<std::string> foreign_entries(const fs::path& target) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::directory_iterator entries(target, ec);
  if (ec) return {"(the folder cannot be read: " + ec.message() + ")"};  // unknown content: not ours
  for (const auto& e : entries) {
    const std::string name = e.path().filename().string();
    bool ours = false;
    if (name == "plan.json") {
      ours = !e.is_symlink(ec) && e.is_regular_file(ec) && is_plan_json(e.path());
    } else if (!e.is_symlink(ec) && e.is_directory(ec) && is_config_folder_name(name)) {
      fs::directory_iterator files(e.path(), ec);
      ours = !ec;
      for (const auto& f : files)
        if (!f.is_regular_file(ec) || f.is_symlink(ec) || !is_config_file(f.path().filename().string()))
          ours = false;
    }
    if (!ours) out.push_back(name);
    if (out.size() >= 3) break;
  }
  return out;
}

// The folder --out will hold: absolute, without a trailing separator. It may be new, empty,
// or an earlier --out folder (then replaced); it may not hold anything else, nor be the
// working folder or one that contains it (it could not be swapped in place).
Expected<fs::path> out_target(const std::string& dir) {
  std::error_code ec;
  fs::path target = fs::absolute(fs::path(dir), ec).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();
  const fs::path cwd = fs::current_path(ec).lexically_normal();
  const auto rel = cwd.lexically_relative(target);
  if (!rel.empty() && *rel.begin() != "..")
    return Diagnostic{dir, "", "--out is the working folder or contains it, so it cannot be replaced",
                      "give a new folder, e.g. --out plans"};
  if (fs::is_symlink(fs::symlink_status(target, ec)))
    return Diagnostic{dir, "", "--out is a symbolic link, which would be replaced by a folder",
                      "give the folder it points to, or a new folder"};
  if (!fs::exists(target, ec)) return target;
  if (!fs::is_directory(target, ec))
    return Diagnostic{dir, "", "--out exists and is not a folder", "give a new or empty folder"};
  const auto foreign = foreign_entries(target);
  if (!foreign.empty()) {
    std::string list;
    for (const auto& f : foreign) list += (list.empty() ? "" : ", ") + f;
    return Diagnostic{dir, "",
                      "output folder exists and holds files an earlier dsplan --out did not write (" + list +
                          "); dsplan replaces only its own --out folders",
                      "choose a new or empty folder for --out"};
  }
  return target;
}

// The folders --out had to create above the target (the highest one that did not exist),
// removed again unless the write succeeds: a failed --out leaves no trace.
struct CreatedParents {
  fs::path top;
  bool keep = false;
  explicit CreatedParents(const fs::path& parent) {
    std::error_code ec;
    for (fs::path p = parent; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
      top = p;
      if (p == p.parent_path()) break;
    }
  }
  ~CreatedParents() {
    std::error_code ec;
    if (!keep && !top.empty()) fs::remove_all(top, ec);
  }
};

// Temporary folders of earlier runs that were killed while writing (".dsplan-tmp-<pid>"
// beside the target, whose process is gone): half-written output, removed.
void remove_stale_temporaries(const fs::path& parent) {
  std::error_code ec;
  static const std::regex name(R"(\.dsplan-tmp-([0-9]+))");
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    std::smatch m;
    const std::string n = it->path().filename().string();
    if (!std::regex_match(n, m, name)) continue;
    const long pid = std::stol(m[1].str());
    if (pid > 0 && pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code rm;
      fs::remove_all(it->path(), rm);
    }
  }
}

}  // namespace

Expected<bool> write_out_dir(const std::string& dir, const EstimatePlan& plan) {
  std::error_code ec;
  if (dir.empty()) return Diagnostic{"--out", "", "needs a folder path", "give a new or empty folder"};
  auto resolved = out_target(dir);
  if (!resolved) return resolved.errors();
  const fs::path target = *resolved;
  CreatedParents parents(target.parent_path());
  remove_stale_temporaries(target.parent_path());
  // A sibling with a short name, so a target name near the file-name limit still works.
  const fs::path tmp = target.parent_path() / (".dsplan-tmp-" + std::to_string(::getpid()));
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
    // Megatron-LM plans launch pretrain_gpt.py with megatron_args.txt; the others DeepSpeed.
    const std::string launch =
        e.cfg.framework == Framework::megatron
            ? megatron_launch_script(e.cfg, plan.request.cluster)
            : "#!/bin/sh\n# Replace train.py and its arguments with your training script." +
                  std::string(launch_layout(e.cfg, plan.request.cluster).nodes > 1
                                  ? "\n# hostfile: one line per host, \"<host> slots=<GPUs>\"."
                                  : "") +
                  "\n" + deepspeed_launch_command(e.cfg, plan.request.cluster, "train.py", {}, cfg_path) +
                  "\n";
    ok = ok && write_file(d / "launch.sh", launch);
    ok = ok &&
         write_file(
             d / "megatron_args.txt",
             join_words(megatron_args(e.cfg, plan.request.model, plan.request.cluster.node.gpu.arch)) + "\n");
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
    if (e.cfg.framework == Framework::megatron)
      notes +=
          "framework megatron: launch.sh runs Megatron-LM's pretrain_gpt.py with megatron_args.txt, the run "
          "that was priced; ds_config.json is DeepSpeed's ZeRO-" +
          std::to_string(e.cfg.zero_stage) + " equivalent for reference\n";
    if (e.cfg.framework == Framework::ddp)
      notes +=
          std::string("framework ddp: the run priced is torch DistributedDataParallel ") +
          (e.cfg.pure16_model() ? "over a bf16 model (model.to(torch.bfloat16), no autocast, no fp32 master)"
                                : "under autocast") +
          (e.cfg.zero_stage == 1
               ? ", its optimizer wrapped in torch.distributed.optim.ZeroRedundancyOptimizer "
                 "(optimizer state sharded, parameters broadcast after each step)"
               : "") +
          "; ds_config.json and launch.sh are DeepSpeed's ZeRO-" + std::to_string(e.cfg.zero_stage) +
          " equivalent, megatron_args.txt gives the model shape in Megatron's flags\n";
    for (const auto& n : ds_config_notes(e.cfg)) notes += n + "\n";
    if (const auto gaps = megatron_args_gaps(plan.request.model, e.cfg.framework); !gaps.empty())
      notes += "megatron_args.txt cannot express " + join(gaps) +
               ": a Megatron-LM run of these flags trains a different block than the one priced\n";
    if (!notes.empty()) ok = ok && write_file(d / "NOTES.txt", notes);
    // The plan.json element of this configuration, its accuracy band (and with
    // --train-tokens the run's length) included.
    const Json pred = config_entry_json(e, plan.request.cluster.node.gpu.arch, plan.train_tokens);
    ok = ok && write_file(d / "prediction.json", pred.dump(2) + "\n");
  }
  if (!ok) {
    fs::remove_all(tmp, ec);
    return Diagnostic{dir, "", "could not write the output files", "check free space and permissions"};
  }
  // Swap in: the earlier folder is moved aside first and only deleted once the new one is
  // in place, so a failed rename leaves the earlier output as it was.
  const fs::path old = target.parent_path() / (".dsplan-old-" + std::to_string(::getpid()));
  const bool had_old = fs::exists(target, ec);
  if (had_old) {
    fs::remove_all(old, ec);
    fs::rename(target, old, ec);
    if (ec) {
      const std::string why = ec.message();  // before remove_all() reuses ec
      fs::remove_all(tmp, ec);
      return Diagnostic{dir, "", "could not replace the earlier --out folder: " + why,
                        "check permissions, or choose a new folder"};
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    const std::string why = ec.message();
    if (had_old) fs::rename(old, target, ec);
    fs::remove_all(tmp, ec);
    return Diagnostic{dir, "", "could not move the output into place: " + why, "check permissions"};
  }
  if (had_old) fs::remove_all(old, ec);
  parents.keep = true;
  return true;
}

}  // namespace dsplan::cli
