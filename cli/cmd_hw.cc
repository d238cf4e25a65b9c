// 'dsplan hw': lists the GPU and system presets as two tables (dense peak TFLOP/s per
// precision, HBM, memory, links) or as JSON, or shows one piece of hardware -- a system
// preset, a GPU preset (shown as the generic node it becomes) or a cluster JSON file --
// with the --gpus-per-node / --inter-node-gbps overrides that 'estimate' would apply.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "core/names.h"
#include "hwdb/hwdb.h"

namespace dsplan::cli {
namespace {

double nic_Gbps(const SystemSpec& s) { return s.nic_bw.v * 8 / 1e9; }

std::string links(const GpuSpec& g) {
  if (g.nvlink_links == 0) return "none";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%dx%g GB/s", g.nvlink_links, in_GBps(g.nvlink_bw_per_link));
  return buf;
}

Json peaks_json(const GpuSpec& g) {
  GpuPeaks p = gpu_peaks_TFLOPS(g);
  return Json{{"fp16_tc", p.fp16_tc}, {"bf16_tc", p.bf16_tc}, {"tf32_tc", p.tf32_tc},
              {"fp8_tc", p.fp8_tc},   {"fp4_tc", p.fp4_tc},   {"fp32", p.fp32}};
}

void print_gpu_table(const std::vector<GpuSpec>& gpus) {
  std::printf("GPUs (dense peak TFLOP/s; '-' = no such tensor-core path)\n");
  std::printf("%-16s %-7s %8s %8s %7s %7s %7s %7s %7s %6s %-11s %-11s %5s\n", "name", "arch", "mem_GiB",
              "HBM_GB/s", "fp16", "bf16", "tf32", "fp8", "nvfp4", "fp32", "nvlink/dir", "pcie/dir", "TDP_W");
  auto tf = [](double x) {
    char b[16];
    if (x <= 0) return std::string("-");
    std::snprintf(b, sizeof b, "%.1f", x);
    return std::string(b);
  };
  for (const auto& g : gpus) {
    GpuPeaks p = gpu_peaks_TFLOPS(g);
    char pcie[24];
    std::snprintf(pcie, sizeof pcie, "gen%d %g", g.pcie_gen, in_GBps(g.pcie_bw));
    std::printf("%-16s %-7s %8.1f %8.0f %7s %7s %7s %7s %7s %6s %-11s %-11s %5.0f\n", g.name.c_str(),
                name(g.arch), in_GiB(g.memory), in_GBps(g.hbm_bw), tf(p.fp16_tc).c_str(),
                tf(p.bf16_tc).c_str(), tf(p.tf32_tc).c_str(), tf(p.fp8_tc).c_str(), tf(p.fp4_tc).c_str(),
                tf(p.fp32).c_str(), links(g).c_str(), pcie, g.tdp_W);
  }
}

void print_system_table(const std::vector<SystemSpec>& systems) {
  std::printf("\nSystems (per node; link rates per direction)\n");
  std::printf("%-14s %-11s %4s %-11s %9s %4s %-10s %9s %8s %8s %5s\n", "name", "gpu", "gpus", "topology",
              "GB/s/gpu", "nvls", "nics", "Gb/s/node", "host_GiB", "host_GB/s", "cores");
  for (const auto& s : systems) {
    char nics[24];
    std::snprintf(nics, sizeof nics, "%dx%g", s.nics_per_node, nic_Gbps(s));
    std::printf("%-14s %-11s %4d %-11s %9g %4s %-10s %9g %8g %8g %5d\n", s.name.c_str(), s.gpu.name.c_str(),
                s.gpus_per_node, name(s.topology), in_GBps(s.intra_bw_per_gpu), s.nvls ? "yes" : "no", nics,
                nic_Gbps(s) * s.nics_per_node, in_GiB(s.host_memory), in_GBps(s.host_mem_bw), s.cpu_cores);
  }
}

int run_list(bool json) {
  std::vector<GpuSpec> gpus;
  std::vector<SystemSpec> systems;
  Diagnostics errs;
  for (const auto& n : gpu_preset_names()) {
    auto g = gpu_preset(n);
    if (g) gpus.push_back(*g);
    else errs.insert(errs.end(), g.errors().begin(), g.errors().end());
  }
  for (const auto& n : system_preset_names()) {
    auto s = system_preset(n);
    if (s) systems.push_back(*s);
    else errs.insert(errs.end(), s.errors().begin(), s.errors().end());
  }
  if (!errs.empty()) return report(errs);
  if (!json) {
    print_gpu_table(gpus);
    print_system_table(systems);
    return 0;
  }
  Json out{{"gpus", Json::array()}, {"systems", Json::array()}};
  for (const auto& g : gpus) {
    Json j = gpu_to_json(g);
    j["peak_dense_TFLOPS"] = peaks_json(g);
    j["source"] = hardware_preset_source(g.name);
    out["gpus"].push_back(std::move(j));
  }
  for (const auto& s : systems) {
    Json j = system_to_json(s);
    j["source"] = hardware_preset_source(s.name);
    out["systems"].push_back(std::move(j));
  }
  std::cout << out.dump(2) << "\n";
  return 0;
}

void print_one(const SystemSpec& s, const std::string& source) {
  const GpuSpec& g = s.gpu;
  GpuPeaks p = gpu_peaks_TFLOPS(g);
  std::printf("%s\n", describe(s).c_str());
  if (!source.empty()) std::printf("  source: %s\n", source.c_str());
  std::printf("gpu %s (%s)\n", g.name.c_str(), name(g.arch));
  std::printf("  %-14s %.2f GiB (%.0f MiB), HBM %g GB/s, L2 %g MiB\n", "memory", in_GiB(g.memory),
              in_MiB(g.memory), in_GBps(g.hbm_bw), in_MiB(g.l2));
  std::printf("  %-14s %d SMs, tensor clock %g MHz, boost %g MHz, TDP %g W\n", "compute", g.sm_count,
              g.tensor_clock_MHz, g.boost_clock_MHz, g.tdp_W);
  std::printf(
      "  %-14s fp16 %.1f, bf16 %.1f, tf32 %.1f, fp8 %.1f, nvfp4 %.1f, fp32 %.1f TFLOP/s (0 = not "
      "supported)\n",
      "dense peaks", p.fp16_tc, p.bf16_tc, p.tf32_tc, p.fp8_tc, p.fp4_tc, p.fp32);
  std::printf("  %-14s NVLink %s, PCIe gen%d %g GB/s (per direction)\n", "links", links(g).c_str(),
              g.pcie_gen, in_GBps(g.pcie_bw));
  std::printf("node\n");
  std::printf("  %-14s %d GPUs, %s, %g GB/s per GPU per direction%s\n", "intra-node", s.gpus_per_node,
              name(s.topology), in_GBps(s.intra_bw_per_gpu), s.nvls ? ", NVLink SHARP" : "");
  std::printf("  %-14s %d NICs x %g Gb/s = %g Gb/s per node\n", "network", s.nics_per_node, nic_Gbps(s),
              nic_Gbps(s) * s.nics_per_node);
  std::printf("  %-14s %g GiB, %g GB/s, %d cores\n", "host", in_GiB(s.host_memory), in_GBps(s.host_mem_bw),
              s.cpu_cores);
  if (s.gpus_per_host > 0 && s.gpus_per_host != s.gpus_per_node)
    std::printf("  %-14s %d hosts of %d GPUs (a launcher starts %d processes on each)\n", "hosts",
                s.gpus_per_node / s.gpus_per_host, s.gpus_per_host, s.gpus_per_host);
}

struct Opts {
  std::string what;
  bool json = false;
  std::optional<int> gpus_per_node;
  std::optional<double> inter_node_gbps;
};

int run_one(const Opts& o) {
  auto s = resolve_hardware(o.what, o.gpus_per_node, o.inter_node_gbps, read_text_file);
  if (!s) return report(s.errors());
  std::string source = hardware_preset_source(o.what);
  if (o.json) {
    Json j = system_to_json(*s);
    if (!source.empty()) j["source"] = source;
    std::cout << j.dump(2) << "\n";
  } else {
    print_one(*s, source);
  }
  return 0;
}

}  // namespace

void add_hw(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand(
      "hw", "List the GPU and system presets, or show one (preset name or cluster JSON file)");
  auto opts = std::make_shared<Opts>();
  auto* hw =
      sub->add_option("hardware", opts->what,
                      "a system preset, a GPU preset (a generic node of it) or a system/cluster JSON path");
  sub->add_flag("--json", opts->json, "print JSON instead of tables (one item: a loadable system file)");
  const std::string range = "an integer in [1, " + std::to_string(kMaxGpusPerNode) + "]";
  sub->add_option("--gpus-per-node", opts->gpus_per_node,
                  "override the GPUs per node (1.." + std::to_string(kMaxGpusPerNode) + ")")
      ->check(number_check(true, 1, kMaxGpusPerNode, range));
  sub->add_option("--inter-node-gbps", opts->inter_node_gbps,
                  "override the network bandwidth per node in Gbit/s (split over its NICs)")
      ->check(number_check(false, kMinInterNodeGbps, kMaxInterNodeGbps,
                           "Gbit/s per node in [0.01, 1000000], e.g. 1600"));
  sub->callback([opts, hw, &exit_code] {
    if (hw->count() > 0 && opts->what.empty()) {  // `hw ""`: a name was meant, none given
      exit_code = report(
          {Diagnostic{"", "", "empty hardware name", "a preset name (dsplan hw lists them) or a path"}});
      return;
    }
    if (opts->what.empty() && (opts->gpus_per_node || opts->inter_node_gbps)) {
      exit_code = report({Diagnostic{"", "", "--gpus-per-node and --inter-node-gbps need a hardware name",
                                     "e.g. dsplan hw dgx-a100 --inter-node-gbps 800"}});
      return;
    }
    exit_code = opts->what.empty() ? run_list(opts->json) : run_one(*opts);
  });
}

}  // namespace dsplan::cli
