// GPU description <-> JSON. Keys carry their units (memory_GiB, hbm_GBps, *_MHz,
// *_GBps...); conversion to base units happens here and nowhere else. Rates are per
// direction and dense. Zero FLOP/clk means "no such tensor-core path" (V100 bf16/tf32),
// zero NVLink links means a PCIe card. Schema: docs/model.md §2 Hardware.
#include "core/names.h"
#include "hwdb/hwdb.h"
#include "hwdb/internal.h"

namespace dsplan {
namespace {

using hwdb_detail::get_number;
using hwdb_detail::tidy;

void read_compute(JsonObjectReader& r, GpuSpec& g) {
  r.get("sm_count", g.sm_count, true, 1, 1024);
  get_number(r, "tensor_clock_MHz", g.tensor_clock_MHz, 5000, "MHz");
  get_number(r, "boost_clock_MHz", g.boost_clock_MHz, 5000, "MHz");
  const char* per_clk = "dense FLOP per clock per SM (an FMA counts 2)";
  get_number(r, "fp16_tc_flop_per_clk_sm", g.fp16_tc_flop_per_clk_sm, 65536, per_clk);
  get_number(r, "bf16_tc_flop_per_clk_sm", g.bf16_tc_flop_per_clk_sm, 65536,
             "dense FLOP per clock per SM; 0 when the GPU has no bf16 tensor cores", true);
  get_number(r, "tf32_tc_flop_per_clk_sm", g.tf32_tc_flop_per_clk_sm, 65536,
             "dense FLOP per clock per SM; 0 when the GPU has no tf32 tensor cores", true);
  get_number(r, "fp8_tc_flop_per_clk_sm", g.fp8_tc_flop_per_clk_sm, 131072,
             "dense FLOP per clock per SM; 0 (or absent) when the GPU has no FP8 tensor cores", true, false);
  get_number(r, "fp4_tc_flop_per_clk_sm", g.fp4_tc_flop_per_clk_sm, 262144,
             "dense FLOP per clock per SM of block-scaled FP4 (NVFP4) GEMMs; 0 (or absent) when the "
             "GPU has no FP4 tensor cores",
             true, false);
  get_number(r, "fp32_flop_per_clk_sm", g.fp32_flop_per_clk_sm, 65536, per_clk);
}

void read_memory_and_links(JsonObjectReader& r, GpuSpec& g) {
  double x = 0;
  if (get_number(r, "memory_GiB", x, 4096, "GiB: nvidia-smi's total in MiB divided by 1024"))
    g.memory = GiB(x);
  if (get_number(r, "hbm_GBps", x, 100000, "GB/s (1e9 bytes/s), not bytes/s")) g.hbm_bw = GBps(x);
  if (get_number(r, "l2_MiB", x, 4096, "MiB")) g.l2 = MiB(x);
  r.get("nvlink_links", g.nvlink_links, true, 0, 64);
  if (get_number(r, "nvlink_GBps_per_link", x, 1000,
                 "GB/s per link per direction; 0 when nvlink_links is 0", true))
    g.nvlink_bw_per_link = GBps(x);
  r.get("pcie_gen", g.pcie_gen, true, 1, 7);
  if (get_number(r, "pcie_GBps", x, 1000, "GB/s per direction of the x16 link"))
    g.pcie_bw = GBps(x);
  get_number(r, "tdp_W", g.tdp_W, 5000, "watts");
}

// Checks that need several keys; only run when each key read cleanly.
void cross_check(JsonObjectReader& r, const GpuSpec& g) {
  if (g.nvlink_links > 0 && g.nvlink_bw_per_link.v <= 0)
    r.error("nvlink_GBps_per_link", "must be greater than 0 when nvlink_links is " +
                                        std::to_string(g.nvlink_links),
            "NVLink 2/3/4 run at 25 GB/s per link per direction");
  if (g.tensor_clock_MHz > g.boost_clock_MHz)
    r.error("tensor_clock_MHz", "is above boost_clock_MHz (" + tidy(g.boost_clock_MHz).dump() + " MHz)",
            "the clock the tensor-core peak is quoted at is at most the boost clock");
  if (g.name.empty()) r.error("name", "must not be empty", "e.g. \"a100-80gb\"");
}

}  // namespace

Expected<GpuSpec> parse_gpu_json(const Json& j0, const std::string& file,
                                 const std::string& path) {
  Diagnostics errs;
  std::optional<Json> merged = hwdb_detail::apply_base(j0, hwdb_detail::kGpuDir, file, path, errs);
  if (!errs.empty()) return errs;
  const Json& j = merged ? *merged : j0;
  JsonObjectReader r(j, file, path, errs);
  GpuSpec g;
  r.get("name", g.name, true);
  int arch = 0;
  if (r.get_choice("arch", arch, true, arch_names())) g.arch = static_cast<GpuArch>(arch);
  read_compute(r, g);
  read_memory_and_links(r, g);
  std::string source;
  r.get("source", source, false);
  r.allow("base");
  r.finish();
  if (!errs.empty()) return errs;
  cross_check(r, g);
  if (!errs.empty()) return errs;
  return g;
}

// GCC 12 reports a false -Warray-bounds inside nlohmann's JSON_DIAGNOSTICS parent
// bookkeeping when building objects; silenced for this function only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
Json gpu_to_json(const GpuSpec& g) {
  return Json{{"name", g.name},
              {"arch", name(g.arch)},
              {"memory_GiB", tidy(in_GiB(g.memory))},
              {"hbm_GBps", tidy(in_GBps(g.hbm_bw))},
              {"sm_count", g.sm_count},
              {"tensor_clock_MHz", tidy(g.tensor_clock_MHz)},
              {"boost_clock_MHz", tidy(g.boost_clock_MHz)},
              {"fp16_tc_flop_per_clk_sm", tidy(g.fp16_tc_flop_per_clk_sm)},
              {"bf16_tc_flop_per_clk_sm", tidy(g.bf16_tc_flop_per_clk_sm)},
              {"tf32_tc_flop_per_clk_sm", tidy(g.tf32_tc_flop_per_clk_sm)},
              {"fp8_tc_flop_per_clk_sm", tidy(g.fp8_tc_flop_per_clk_sm)},
              {"fp4_tc_flop_per_clk_sm", tidy(g.fp4_tc_flop_per_clk_sm)},
              {"fp32_flop_per_clk_sm", tidy(g.fp32_flop_per_clk_sm)},
              {"l2_MiB", tidy(in_MiB(g.l2))},
              {"nvlink_links", g.nvlink_links},
              {"nvlink_GBps_per_link", tidy(in_GBps(g.nvlink_bw_per_link))},
              {"pcie_gen", g.pcie_gen},
              {"pcie_GBps", tidy(in_GBps(g.pcie_bw))},
              {"tdp_W", tidy(g.tdp_W)}};
}
#pragma GCC diagnostic pop

}  // namespace dsplan
