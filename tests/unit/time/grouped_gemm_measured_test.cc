// The experts' GEMMs of an MoE layer against measurements (tests/data/gemm/
// grouped_gemm_rates_h200_s42.json, scripts/grouped_gemm_rates.py on the lent H200, session
// 42): each linear's forward, input gradient and weight gradient for E local experts of n
// tokens, as torch._grouped_mm (CUTLASS grouped GEMM), torch.bmm and one dense GEMM of the
// same FLOPs. dsplan prices the experts as a batched GEMM (op_dims.cc, kMoe shapes with
// batch = local experts). What is checked is the RATIO to the dense GEMM: the level of both is
// set against sustained training (the isolated kernels run in bursts above it, see
// fp8_measured_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/gemm.h"
#include "hwdb/hwdb.h"
#include "test_data.h"

namespace dsplan {
namespace {

struct Row {
  std::string name;
  double experts, tokens, out, in;
  std::string op;
  double grouped_us, bmm_us, dense_us;
};

std::vector<Row> load() {
  std::vector<Row> rows;
  const Json j = test::load_test_data("gemm/grouped_gemm_rates_h200_s42.json");
  for (const auto& r : j.at("rows"))
    rows.push_back({r.at("case").get<std::string>() + " " + r.at("linear").get<std::string>(),
                    r.at("experts").get<double>(), r.at("tokens").get<double>(), r.at("out").get<double>(),
                    r.at("in").get<double>(), r.at("op").get<std::string>(), r.at("grouped_us").get<double>(),
                    r.at("bmm_us").get<double>(), r.at("dense_us").get<double>()});
  return rows;
}

// The shape dsplan prices for one op of a linear in -> out over `rows` tokens (op_acc.h:
// forward rows x out x in; input gradient rows x in x out; weight gradient out x in x rows),
// `batch` members.
GemmShape shape(const Row& r, double rows, double batch) {
  if (r.op == "fwd") return {.m = rows, .n = r.out, .k = r.in, .batch = batch, .m_free = true};
  if (r.op == "dgrad") return {.m = rows, .n = r.in, .k = r.out, .batch = batch, .m_free = true};
  return {.m = r.in, .n = r.out, .k = rows, .batch = batch, .k_free = true};
}

struct Ratios {
  double predicted, measured;  // batched time / dense time
};

Ratios ratios(const Row& r, const GpuSpec& gpu, const Efficiency& eff) {
  const double batched = estimate_gemm(shape(r, r.tokens, r.experts), Precision::bf16, gpu, eff).time.v;
  // The dense GEMM of the same FLOPs: every expert's tokens against one weight.
  const double dense = estimate_gemm(shape(r, r.tokens * r.experts, 1), Precision::bf16, gpu, eff).time.v;
  return {batched / dense, r.bmm_us / r.dense_us};
}

TEST(GroupedGemmMeasured, DataIsComplete) {
  EXPECT_EQ(load().size(), 36u);  // 6 rank views x 2 linears x 3 ops
}

// The batched price follows what the batch costs beside one dense GEMM: session 42, +0.8% on
// average and 5.3% RMS over the 36 ops (bounds 3% and 8%). The largest misses are two weight
// gradients whose dense twin has only 48 output tiles for 132 SMs and a 32,768-long reduction
// (Qwen3-30B fc2 at EP 16 and 8, -13%): dsplan's split-K price of that dense GEMM is slower
// than cuBLAS ran it, not the batched one. For the weight gradients with 256 tokens an expert
// (Qwen3-30B-A3B at EP 1, a 256-long reduction) the slowdown is priced: fc1 measured 1.53x the
// dense GEMM, predicted 1.54x.
TEST(GroupedGemmMeasured, BatchedPriceFollowsTheMeasuredBatchedGemm) {
  const GpuSpec h200 = *gpu_preset("h200-141gb");
  const Efficiency eff = default_efficiency(h200);
  double mean = 0, rms = 0;
  const auto rows = load();
  for (const Row& r : rows) {
    const Ratios q = ratios(r, h200, eff);
    const double e = q.predicted / q.measured - 1.0;
    std::printf("%-26s %-5s predicted %.3f measured %.3f (%+.1f%%)\n", r.name.c_str(), r.op.c_str(),
                q.predicted, q.measured, 100 * e);
    mean += e, rms += e * e;
    if (r.name == "qwen3-30b-a3b-ep1 fc1" && r.op == "wgrad") {
      EXPECT_GT(q.measured, 1.4);
      EXPECT_NEAR(q.predicted, q.measured, 0.1);
    }
  }
  mean /= rows.size(), rms = std::sqrt(rms / rows.size());
  EXPECT_LT(std::fabs(mean), 0.03) << mean;
  EXPECT_LT(rms, 0.08) << rms;
}

// Torch's grouped kernel (CUTLASS, what the reference workload runs) is slower than the batched
// GEMM dsplan prices: 8-12% for most ops, up to 32% for the 256-token weight gradients. This is
// the premium a PyTorch MoE layer pays beyond the price; Megatron-Core's Transformer Engine
// grouped linear runs cuBLAS instead (not measured here).
TEST(GroupedGemmMeasured, TorchGroupedKernelRunsBelowTheBatchedRate) {
  const auto rows = load();
  std::vector<double> r;
  for (const Row& x : rows) r.push_back(x.grouped_us / x.bmm_us);
  std::sort(r.begin(), r.end());
  const double median = (r[r.size() / 2 - 1] + r[r.size() / 2]) / 2;
  EXPECT_GT(median, 1.05);
  EXPECT_LT(median, 1.15);
  EXPECT_GT(r.back(), 1.25);  // the 256-token weight gradient
}

}  // namespace
}  // namespace dsplan
