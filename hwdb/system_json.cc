// Node (system) description <-> JSON. "gpu" is a GPU preset name or an inline GPU object;
// link and NIC rates are per direction (intra_GBps_per_gpu in GB/s, nic_Gbps in Gbit/s
// per NIC, as network cards are sold). Checks that the intra-node rate fits the GPU's own
// links so that a bidirectional datasheet figure (600 GB/s) is caught. Schema:
// docs/model.md §2 Hardware.
#include <cstdio>

#include "core/names.h"
#include "hwdb/hwdb.h"
#include "hwdb/internal.h"

namespace dsplan {
namespace {

using hwdb_detail::get_number;
using hwdb_detail::tidy;

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

bool append(Diagnostics& errs, const Diagnostics& more) {
  errs.insert(errs.end(), more.begin(), more.end());
  return false;
}

// Reads "gpu": a preset name or an inline object. Returns false (with diagnostics) on failure.
bool read_gpu(JsonObjectReader& r, const std::string& file, GpuSpec& out, Diagnostics& errs) {
  const Json* g = r.child("gpu", true);
  if (!g) return false;
  if (g->is_string()) {
    std::string name = g->get<std::string>();
    if (!hwdb_detail::find_preset(hwdb_detail::kGpuDir, name)) {
      errs.push_back(hwdb_detail::unknown_name(file, "/gpu", "GPU preset", name, gpu_preset_names()));
      return false;
    }
    Expected<GpuSpec> spec = gpu_preset(name);
    if (!spec) return append(errs, spec.errors());
    out = *spec;
    return true;
  }
  if (!g->is_object()) {
    r.error("gpu", "expected a GPU preset name or a GPU object",
            "one of: " + join(gpu_preset_names()) + "; or an object as in docs/model.md §2 Hardware");
    return false;
  }
  Expected<GpuSpec> spec = parse_gpu_json(*g, file, "/gpu");
  if (!spec) return append(errs, spec.errors());
  out = *spec;
  return true;
}

void read_node(JsonObjectReader& r, SystemSpec& s) {
  r.get("gpus_per_node", s.gpus_per_node, true, 1, kMaxGpusPerNode);
  int topo = 0;
  if (r.get_choice("topology", topo, true, topology_names()))
    s.topology = static_cast<IntraTopology>(topo);
  double x = 0;
  if (get_number(r, "intra_GBps_per_gpu", x, 10000, "GB/s per GPU per direction (half the bidirectional figure)"))
    s.intra_bw_per_gpu = GBps(x);
  r.get("nvls", s.nvls, false);
  r.get("nics_per_node", s.nics_per_node, true, 0, kMaxGpusPerNode);
  if (get_number(r, "nic_Gbps", x, 10000, "Gbit/s per NIC per direction, e.g. 200 for HDR", true))
    s.nic_bw = Gbitps(x);
  if (get_number(r, "host_memory_GiB", x, 1 << 20, "GiB of host DRAM per node")) s.host_memory = GiB(x);
  if (get_number(r, "host_mem_GBps", x, 100000, "GB/s of host DRAM bandwidth per node"))
    s.host_mem_bw = GBps(x);
  r.get("cpu_cores", s.cpu_cores, true, 1, 4096);
  r.get("gpus_per_host", s.gpus_per_host, false, 1, kMaxGpusPerNode);
}

// Consistency of the node with its GPU; run only when every key read cleanly.
void cross_check(JsonObjectReader& r, const SystemSpec& s) {
  const GpuSpec& g = s.gpu;
  double intra = in_GBps(s.intra_bw_per_gpu);
  if (s.topology != IntraTopology::pcie) {
    double nvlink = g.nvlink_links * in_GBps(g.nvlink_bw_per_link);
    if (g.nvlink_links == 0)
      r.error("topology", std::string("topology \"") + name(s.topology) + "\" needs a GPU with NVLink, but " +
                              g.name + " has none", "use \"pcie\"");
    else if (intra > nvlink * 1.0001)
      r.error("intra_GBps_per_gpu", "exceeds the GPU's NVLink rate of " + num(nvlink) + " GB/s per direction",
              "give the per-direction rate (half the bidirectional datasheet figure)");
  } else if (intra > in_GBps(g.pcie_bw) * 1.0001) {
    r.error("intra_GBps_per_gpu", "exceeds the GPU's PCIe rate of " + num(in_GBps(g.pcie_bw)) + " GB/s",
            "on a PCIe node GPUs talk at most at their x16 rate");
  }
  if (s.nvls && s.topology != IntraTopology::nvswitch)
    r.error("nvls", "NVLink SHARP needs topology \"nvswitch\"", "set \"nvls\": false");
  else if (s.nvls && !hopper_or_newer(s.gpu.arch))
    r.error(
        "nvls",
        "NVLink SHARP needs Hopper's or Blackwell's NVSwitch (NVLink 4 or 5); " + s.gpu.name + " has none",
        "set \"nvls\": false");
  if (s.gpus_per_host > 0 && s.gpus_per_node % s.gpus_per_host != 0)
    r.error(
        "gpus_per_host",
        std::to_string(s.gpus_per_host) + " does not divide gpus_per_node " + std::to_string(s.gpus_per_node),
        "the GPUs of one host (OS image) a launcher starts, e.g. 4 for a GB200 compute tray; a divisor of "
        "gpus_per_node, or leave it out for a node that is one host");
  if (s.nics_per_node > 0 && s.nic_bw.v <= 0)
    r.error("nic_Gbps", "must be greater than 0 when nics_per_node is " + std::to_string(s.nics_per_node), "");
  if (s.name.empty()) r.error("name", "must not be empty", "e.g. \"dgx-a100\"");
}

}  // namespace

Expected<SystemSpec> parse_system_json(const Json& j0, const std::string& file) {
  // A model JSON (or a Hugging Face config.json) given where a cluster belongs would yield a
  // line per missing and unknown key: say the one thing that is wrong.
  if (j0.is_object() && j0.contains("configs"))
    return Diagnostic{
        file, "", "this is a plan ('dsplan estimate --json' output), not a cluster",
        "--hw takes a GPU or system preset or a cluster JSON; the plan's own is its \"hardware\""};
  const bool model_keys = j0.is_object() && !j0.contains("gpu") && !j0.contains("base") &&
                          ((j0.contains("layers") && j0.contains("hidden")) || j0.contains("model_type") ||
                           j0.contains("num_hidden_layers") || j0.contains("n_layer") ||
                           (j0.contains("model") && j0["model"].is_object()));
  if (model_keys)
    return Diagnostic{file, "",
                      "this is a model file (it has layers and hidden, or model_type), not a cluster",
                      "give it to --model; --hw takes a GPU or system preset or a cluster JSON "
                      "(dsplan hw NAME --json shows one)"};
  Diagnostics errs;
  std::optional<Json> merged = hwdb_detail::apply_base(j0, hwdb_detail::kSystemDir, file, "", errs);
  if (!errs.empty()) return errs;
  const Json& j = merged ? *merged : j0;
  JsonObjectReader r(j, file, "", errs);
  SystemSpec s;
  r.get("name", s.name, true);
  bool gpu_ok = read_gpu(r, file, s.gpu, errs);
  read_node(r, s);
  std::string source;
  r.get("source", source, false);
  r.allow("base");
  r.finish();
  if (!errs.empty() || !gpu_ok) return errs;
  cross_check(r, s);
  if (!errs.empty()) return errs;
  return s;
}

// GCC 12 reports a false -Warray-bounds inside nlohmann's JSON_DIAGNOSTICS parent
// bookkeeping when building objects; silenced for this function only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
Json system_to_json(const SystemSpec& s) {
  Json j{{"name", s.name},
         {"gpu", gpu_to_json(s.gpu)},
         {"gpus_per_node", s.gpus_per_node},
         {"topology", name(s.topology)},
         {"intra_GBps_per_gpu", tidy(in_GBps(s.intra_bw_per_gpu))},
         {"nvls", s.nvls},
         {"nics_per_node", s.nics_per_node},
         {"nic_Gbps", tidy(s.nic_bw.v * 8.0 / 1e9)},
         {"host_memory_GiB", tidy(in_GiB(s.host_memory))},
         {"host_mem_GBps", tidy(in_GBps(s.host_mem_bw))},
         {"cpu_cores", s.cpu_cores}};
  if (s.gpus_per_host > 0) j["gpus_per_host"] = s.gpus_per_host;
  return j;
}
#pragma GCC diagnostic pop

}  // namespace dsplan
