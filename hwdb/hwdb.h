// The hardware database: GPU and node (system) descriptions in JSON, the presets compiled
// into the binary (hwdb/data/{gpus,systems}/*.json), and the resolution of what a user
// names on the command line (a system preset, a GPU preset, or a cluster JSON file) into
// one SystemSpec. The JSON schema, units and every figure's source are documented in
// docs/model.md §2 Hardware. Nothing here reads files itself: callers pass a reader.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/hardware_spec.h"
#include "core/json_reader.h"

namespace dsplan {

// The accepted range of --inter-node-gbps (Gbit/s per node); the low end is the smallest
// per-NIC rate a cluster JSON accepts (nic_Gbps).
inline constexpr double kMinInterNodeGbps = 0.01, kMaxInterNodeGbps = 1e6;
// The most GPUs one node (one NVLink domain) holds: a GB200 NVL72 rack's 72.
inline constexpr int kMaxGpusPerNode = 72;

// Parses one GPU object. `file` and `path` (the JSON pointer of the object) are used in
// diagnostics. An object may start from a preset with {"base": "<gpu preset>", ...} and
// override some keys. Every problem is reported, not just the first.
Expected<GpuSpec> parse_gpu_json(const Json& j, const std::string& file,
                                 const std::string& path = "");

// Parses one node description. "gpu" is a GPU preset name or an inline GPU object; the
// whole object may start from a system preset with {"base": "<system preset>", ...}.
Expected<SystemSpec> parse_system_json(const Json& j, const std::string& file);

// The presets shipped in the binary, by name (the JSON file's stem).
Expected<GpuSpec> gpu_preset(std::string_view name);
Expected<SystemSpec> system_preset(std::string_view name);
std::vector<std::string> gpu_preset_names();
std::vector<std::string> system_preset_names();
// The "source" citation of a GPU or system preset; "" when `name` is not a preset.
std::string hardware_preset_source(std::string_view name);

// A node built around one GPU model when the user names only a GPU: `gpus_per_node` GPUs
// (default 8) on NVSwitch at the GPU's full NVLink rate for parts with NVLink, otherwise
// on PCIe at the GPU's x16 rate; one 200 Gb/s NIC per GPU; NVLink SHARP for Hopper on
// NVSwitch; per GPU 128 GiB host memory, 51.2 GB/s of host memory bandwidth and 16 cores
// (a DGX A100 host divided by its 8 GPUs). See docs/model.md §2 Hardware.
SystemSpec generic_node(const GpuSpec& gpu, int gpus_per_node = 8);

// Reads a file's text given its path; a failure is a diagnostic naming the file.
using FileReader = std::function<Expected<std::string>(const std::string&)>;

// What the user named: a system preset; a GPU preset (-> generic_node); or, when the
// name contains '/' or ends in ".json", a system/cluster JSON file read through
// `read_file`. Overrides: `gpus_per_node` (1..kMaxGpusPerNode) replaces the node's GPU count (host
// resources and NICs are kept, except on a generic node, which is rebuilt);
// `inter_node_Gbps` is the network bandwidth PER NODE in Gbit/s, split evenly over the
// node's NICs (one NIC is assumed when the node has none). Preset names match in any
// case, and a GPU family alone names its DGX node (v100 = dgx1-v100, a100 = dgx-a100,
// h100 = dgx-h100, h200 = dgx-h200, b200 = dgx-b200, gb200 = gb200-nvl72, b300 = dgx-b300,
// gb300 = gb300-nvl72, a800 = hgx-a800, h800 = hgx-h800).
// Unknown names get a "did you mean" hint.
Expected<SystemSpec> resolve_hardware(std::string_view name_or_path,
                                      std::optional<int> gpus_per_node,
                                      std::optional<double> inter_node_Gbps,
                                      const FileReader& read_file);

// The same schema the parsers read: parse_*_json(to_json(x)) == x. The GPU is written
// inline in a system so the output stands on its own. "source" is not kept in the specs
// and is therefore not written.
Json gpu_to_json(const GpuSpec& gpu);
Json system_to_json(const SystemSpec& sys);

// Dense per-GPU peaks read from the spec, in TFLOP/s, for tables and descriptions.
struct GpuPeaks {
  double fp16_tc = 0, bf16_tc = 0, tf32_tc = 0, fp8_tc = 0, fp4_tc = 0, fp32 = 0;
};
GpuPeaks gpu_peaks_TFLOPS(const GpuSpec& gpu);

// One line for the "assumed hardware" line of estimate, e.g.
// "dgx-a100: 8x a100-80gb (80.0 GiB, 312 TFLOP/s bf16, 2039 GB/s HBM) per node, NVSwitch
//  300 GB/s/dir per GPU, 8x 200 Gb/s NICs (1600 Gb/s per node)".
std::string describe(const SystemSpec& sys);

}  // namespace dsplan
