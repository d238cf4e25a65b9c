// Turns what the user names (system preset, GPU preset, or a JSON file) into one
// SystemSpec, applies the --gpus-per-node / --inter-node-gbps overrides, and describes
// the result in one line. A bare GPU becomes a generic node whose assumptions are listed
// in hwdb.h and docs/model.md §2 Hardware.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/names.h"
#include "hwdb/hwdb.h"
#include "hwdb/internal.h"

namespace dsplan {
namespace {

// Generic-node host, per GPU: DGX A100's 409.6 GB/s and 128 cores divided by its 8 GPUs,
// and 128 GiB (1 TiB for 8 GPUs, the DGX A100 320 GB model's host memory).
constexpr double kHostGiBPerGpu = 128;
constexpr double kHostGBpsPerGpu = 51.2;
constexpr int kCoresPerGpu = 16;
constexpr double kGenericNicGbps = 200;

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool looks_like_path(std::string_view s) {
  return s.find('/') != std::string_view::npos ||
         (s.size() > 5 && s.substr(s.size() - 5) == ".json");
}

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

// A file holds a system, or just a GPU: an object without "gpu" that has "arch" or
// starts from a GPU preset ("base").
bool is_gpu_object(const Json& j) {
  if (!j.is_object() || j.contains("gpu")) return false;
  if (j.contains("arch")) return true;
  auto b = j.find("base");
  return b != j.end() && b->is_string() &&
         hwdb_detail::find_preset(hwdb_detail::kGpuDir, b->get<std::string>()) != nullptr;
}

Expected<SystemSpec> load_file(const std::string& path, std::optional<int> gpus_per_node,
                               const FileReader& read_file, bool& generic) {
  Expected<std::string> text = read_file(path);
  if (!text) return text.errors();
  Expected<Json> j = parse_json_text(*text, path);
  if (!j) return j.errors();
  if (is_gpu_object(*j)) {
    Expected<GpuSpec> g = parse_gpu_json(*j, path);
    if (!g) return g.errors();
    generic = true;
    return generic_node(*g, gpus_per_node.value_or(8));
  }
  return parse_system_json(*j, path);
}

Diagnostics check_overrides(std::optional<int> gpus_per_node, std::optional<double> inter_node_Gbps) {
  Diagnostics errs;
  if (gpus_per_node && (*gpus_per_node < 1 || *gpus_per_node > kMaxGpusPerNode))
    errs.push_back({"", "",
                    "--gpus-per-node must be between 1 and " + std::to_string(kMaxGpusPerNode) + ", got " +
                        std::to_string(*gpus_per_node),
                    ""});
  if (inter_node_Gbps && !(std::isfinite(*inter_node_Gbps) && *inter_node_Gbps >= kMinInterNodeGbps &&
                           *inter_node_Gbps <= kMaxInterNodeGbps))
    errs.push_back({"", "",
                    "--inter-node-gbps must be between " + fmt("%.10g", kMinInterNodeGbps) + " and " +
                        fmt("%.10g", kMaxInterNodeGbps) + ", got " + fmt("%g", *inter_node_Gbps),
                    "network bandwidth per node in Gbit/s, e.g. 1600 for 8x HDR 200G"});
  return errs;
}

// A preset named in other case ("DGX-H100", "A100-80GB") or by its GPU family alone: the
// family's DGX node (v100: DGX-1 with 16 GB V100s, the smaller part, so that a plan fits
// either card). Anything else is returned unchanged and fails as unknown.
std::string canonical_name(std::string_view name, const std::vector<std::string>& known) {
  const std::string lower = ascii_lower(name);
  if (contains(known, lower)) return lower;
  static const std::pair<const char*, const char*> families[] = {
      {"v100", "dgx1-v100"}, {"a100", "dgx-a100"},     {"h100", "dgx-h100"}, {"h200", "dgx-h200"},
      {"b200", "dgx-b200"},  {"gb200", "gb200-nvl72"}, {"a800", "hgx-a800"}, {"h800", "hgx-h800"},
      {"b300", "dgx-b300"},  {"gb300", "gb300-nvl72"}};
  for (const auto& [family, preset] : families)
    if (lower == family) return preset;
  return std::string(name);
}

}  // namespace

SystemSpec generic_node(const GpuSpec& gpu, int gpus_per_node) {
  SystemSpec s;
  s.name = "generic-" + gpu.name;
  s.gpu = gpu;
  s.gpus_per_node = gpus_per_node;
  if (gpu.nvlink_links > 0) {
    s.topology = IntraTopology::nvswitch;
    s.intra_bw_per_gpu = gpu.nvlink_bw_per_link * gpu.nvlink_links;
    s.nvls = hopper_or_newer(gpu.arch);  // NVSwitch gen3/gen4 on HGX H100/H200/B200 boards
  } else {
    s.topology = IntraTopology::pcie;
    s.intra_bw_per_gpu = gpu.pcie_bw;
  }
  s.nics_per_node = gpus_per_node;
  s.nic_bw = Gbitps(kGenericNicGbps);
  s.host_memory = GiB(kHostGiBPerGpu * gpus_per_node);
  s.host_mem_bw = GBps(kHostGBpsPerGpu * gpus_per_node);
  s.cpu_cores = kCoresPerGpu * gpus_per_node;
  return s;
}

Expected<SystemSpec> resolve_hardware(std::string_view name_or_path, std::optional<int> gpus_per_node,
                                      std::optional<double> inter_node_Gbps, const FileReader& read_file) {
  Diagnostics errs = check_overrides(gpus_per_node, inter_node_Gbps);
  if (!errs.empty()) return errs;
  std::vector<std::string> systems = system_preset_names(), gpus = gpu_preset_names();
  Expected<SystemSpec> s = Diagnostics{};
  bool generic = false;  // built for the requested GPU count already
  std::vector<std::string> known = systems;
  known.insert(known.end(), gpus.begin(), gpus.end());
  const std::string canonical =
      looks_like_path(name_or_path) ? std::string(name_or_path) : canonical_name(name_or_path, known);
  name_or_path = canonical;
  if (contains(systems, name_or_path)) {
    s = system_preset(name_or_path);
  } else if (contains(gpus, name_or_path)) {
    Expected<GpuSpec> g = gpu_preset(name_or_path);
    if (!g) return g.errors();
    generic = true;
    s = generic_node(*g, gpus_per_node.value_or(8));
  } else if (looks_like_path(name_or_path)) {
    s = load_file(std::string(name_or_path), gpus_per_node, read_file, generic);
  } else {
    Diagnostic d = hwdb_detail::unknown_name("", "", "hardware", name_or_path, known);
    d.hint += "; or a path to a system JSON file (containing '/' or ending in .json)";
    return d;
  }
  if (!s) return s;
  SystemSpec out = *s;
  if (gpus_per_node && !generic) {
    out.gpus_per_node = *gpus_per_node;
    // Hosts stay as they are where they still tile the node (64 of a rack's GPUs are 16
    // trays of 4); otherwise the largest host size that does.
    if (out.gpus_per_host > 0) out.gpus_per_host = std::gcd(out.gpus_per_host, out.gpus_per_node);
  }
  if (inter_node_Gbps) {
    if (out.nics_per_node == 0) out.nics_per_node = 1;
    out.nic_bw = Gbitps(*inter_node_Gbps / out.nics_per_node);
  }
  return out;
}

GpuPeaks gpu_peaks_TFLOPS(const GpuSpec& g) {
  auto tc = [&](double per_clk) { return g.sm_count * per_clk * g.tensor_clock_MHz * 1e6 / 1e12; };
  GpuPeaks p;
  p.fp16_tc = tc(g.fp16_tc_flop_per_clk_sm);
  p.bf16_tc = tc(g.bf16_tc_flop_per_clk_sm);
  p.tf32_tc = tc(g.tf32_tc_flop_per_clk_sm);
  p.fp8_tc = tc(g.fp8_tc_flop_per_clk_sm);
  p.fp4_tc = tc(g.fp4_tc_flop_per_clk_sm);
  p.fp32 = in_TFLOPS(g.vector_peak());
  return p;
}

std::string describe(const SystemSpec& s) {
  const GpuSpec& g = s.gpu;
  GpuPeaks p = gpu_peaks_TFLOPS(g);
  bool bf16 = p.bf16_tc > 0;
  std::string line = s.name + ": " + std::to_string(s.gpus_per_node) + "x " + g.name + " (" +
                     fmt("%.1f", in_GiB(g.memory)) + " GiB, " + fmt("%.0f", bf16 ? p.bf16_tc : p.fp16_tc) +
                     (bf16 ? " TFLOP/s bf16" : " TFLOP/s fp16") + ", " + fmt("%.0f", in_GBps(g.hbm_bw)) +
                     " GB/s HBM) per node, ";
  const char* topo = s.topology == IntraTopology::nvswitch    ? "NVSwitch"
                     : s.topology == IntraTopology::nvlink_mesh ? "NVLink mesh"
                                                                : "PCIe";
  line += std::string(topo) + " " + fmt("%g", in_GBps(s.intra_bw_per_gpu)) + " GB/s/dir per GPU";
  if (s.nvls) line += " with NVLS";
  double nic_Gbps = s.nic_bw.v * 8 / 1e9;
  line += ", " + std::to_string(s.nics_per_node) + "x " + fmt("%g", nic_Gbps) + " Gb/s NICs (" +
          fmt("%g", nic_Gbps * s.nics_per_node) + " Gb/s per node)";
  if (s.name.rfind("generic-", 0) == 0) line += " [generic node assumed from the GPU alone]";
  return line;
}

}  // namespace dsplan
