// What one `dsplan calibrate` pass measures, decided before touching a GPU: a GEMM grid per
// dtype (squares, a K sweep, shapes straddling the wave boundary of the device's SM count,
// non-aligned sizes, one checked shape per dtype), the exact GEMMs of a model at several
// TP degrees and micro-batches, HBM and PCIe bandwidths, and collectives over message sizes.
// Each item carries a rough cost (seconds) used only to weight the progress bar.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibrate/bench/bench.h"
#include "core/model_spec.h"

namespace dsplan {

struct BenchOptions {
  bool quick = false;                   // the < 1 minute pass
  std::optional<ModelSpec> model;       // add this model's GEMM shapes
  std::vector<int> tp{1, 2, 4, 8};      // TP degrees for the model shapes
  std::vector<int> micro_batches;       // empty = {1, 2, 4} ({1} with quick)
  int seq_len = 2048;
  std::string command;                  // recorded in the provenance
};

struct PlanItem {
  enum class Kind { gemm, bandwidth, collective, overlap } kind = Kind::gemm;
  GemmCase gemm;
  BandwidthKind bandwidth = BandwidthKind::hbm_copy;
  Collective collective = Collective::all_reduce;
  CommScope scope = CommScope::intra_node;
  double bytes = 0;
  Repeats repeats;
  double cost_s = 0;   // rough expected duration, for progress weights
  std::string label;   // for the progress line
};

struct BenchPlan {
  std::vector<PlanItem> items;
  double total_cost_s() const;
};

// GEMMs of one transformer layer (QKV, attention output projection, MLP up/gate and down,
// plus the logits) for forward, input-gradient and weight-gradient passes, with
// tokens = micro_batch * seq_len rows and the TP-split dimension divided by `tp`.
std::vector<GemmCase> model_gemm_cases(const ModelSpec& m, const std::vector<int>& tp,
                                       const std::vector<int>& micro_batches, int seq_len,
                                       GemmDtype dtype);

// The GEMM grid for one dtype on a GPU with `sm_count` SMs.
std::vector<GemmCase> gemm_grid(GemmDtype dtype, int sm_count, bool quick);

// Message sizes 1 KiB .. 1 GiB (x4 steps, x16 with quick), capped so that the buffers
// fit in `device_memory_bytes` with room to spare.
std::vector<double> collective_sizes(bool quick, double device_memory_bytes);

BenchPlan make_plan(const BenchOptions& opt, const DeviceInfo& dev);

}  // namespace dsplan
