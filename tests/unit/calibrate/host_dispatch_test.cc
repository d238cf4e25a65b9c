// The host dispatch probe (calibrate/probes/host_dispatch.py) in records, fit and profile:
// its first real run is `dsplan calibrate --quick --model gpt2` on the lent H100 of session
// 14 (tests/data/calibrate/h100_gpt2_quick_host_profile.json; PyTorch 2.11, 2026-11-23).
#include <gtest/gtest.h>

#include "calibrate/profile.h"
#include "estimator/time/efficiency_defaults.h"
#include "hwdb/hwdb.h"

namespace dsplan {
namespace {

const std::string kProfile = std::string(DSPLAN_TEST_DATA) + "/calibrate/h100_gpt2_quick_host_profile.json";

CalibrationProfile load() {
  auto text = read_text_file(kProfile);
  EXPECT_TRUE(text.ok());
  auto p = load_profile(text.ok() ? *text : "", kProfile);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.errors()[0].to_string());
  return p.ok() ? *p : CalibrationProfile{};
}

// 279 kernels in 9381 us of wall time, the GPU busy for 612 us of it: host-bound, and
// 9381 / 279 = 33.6 us per kernel, which the profile fitted and the model then uses.
TEST(HostDispatch, H100ProbeIsFittedAndUsed) {
  const CalibrationProfile p = load();
  ASSERT_TRUE(p.records.host_dispatch);
  const HostDispatchRecord& h = *p.records.host_dispatch;
  EXPECT_EQ(h.kernels_per_step, 279);
  EXPECT_NEAR(h.step_us / h.kernels_per_step, 33.6, 0.05);
  EXPECT_LT(h.gpu_busy_us_per_step, 0.1 * h.step_us);
  ASSERT_TRUE(p.fitted.host_op_overhead);
  EXPECT_NEAR(in_us(*p.fitted.host_op_overhead), 33.6, 0.05);
  const Efficiency e = to_efficiency(p, default_efficiency(*gpu_preset("h100-80gb")));
  EXPECT_NEAR(in_us(e.host_op_overhead), 33.6, 0.05);
  // Its GEMM fit (bf16 at 1.17 of peak, 28.8% RMS) is not used; the datasheet's stays.
  EXPECT_FALSE(gemm_fit_usable(p.fitted));
  EXPECT_EQ(e.gemm_peak_fraction, default_efficiency(*gpu_preset("h100-80gb")).gemm_peak_fraction);
  // This VM's host is slower than the default assumes.
  EXPECT_GT(e.host_op_overhead.v, Efficiency{}.host_op_overhead.v);
}

TEST(HostDispatch, RefitKeepsTheProbeAndAGpuBoundProbeIsNotFitted) {
  RawRecords r = load().records;
  auto gpu = gpu_preset("h100-80gb");
  ASSERT_TRUE(gpu.ok());
  auto refit = fit_records(r, *gpu);
  ASSERT_TRUE(refit.ok());
  ASSERT_TRUE(refit->fitted.host_op_overhead);
  EXPECT_NEAR(in_us(*refit->fitted.host_op_overhead), 33.6, 0.05);
  // Kernels busy for 60% of the step: the wall time holds GPU work, so it is not fitted.
  r.host_dispatch->gpu_busy_us_per_step = 0.6 * r.host_dispatch->step_us;
  auto busy = fit_records(r, *gpu);
  ASSERT_TRUE(busy.ok());
  EXPECT_FALSE(busy->fitted.host_op_overhead);
  EXPECT_EQ(to_efficiency(*busy).host_op_overhead.v, Efficiency{}.host_op_overhead.v);
  // No probe at all (PyTorch missing): the default stays too.
  r.host_dispatch.reset();
  auto none = fit_records(r, *gpu);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->fitted.host_op_overhead);
  EXPECT_FALSE(profile_to_json(*none)["fitted"].contains("host_op_overhead_us"));
  EXPECT_FALSE(profile_to_json(*none)["records"].contains("host_dispatch"));
}

TEST(HostDispatch, ProbeOutputIsParsedStrictly) {
  auto ok = parse_host_dispatch(
      R"({"framework": "pytorch 2.11.0", "precision": "fp32", "step_us": 5000,
          "kernels_per_step": 250, "gpu_busy_us_per_step": 400, "us_per_kernel": 20})",
      "probe");
  ASSERT_TRUE(ok.ok()) << ok.errors()[0].to_string();
  EXPECT_EQ(ok->us_per_kernel, 20);
  EXPECT_EQ(ok->framework, "pytorch 2.11.0");
  auto missing =
      parse_host_dispatch(R"({"framework": "pytorch", "precision": "fp32", "step_us": 5000})", "probe");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.errors()[0].to_string().find("kernels_per_step"), std::string::npos);
  auto negative = parse_host_dispatch(
      R"({"framework": "p", "precision": "fp32", "step_us": 5000, "kernels_per_step": 250,
          "gpu_busy_us_per_step": 400, "us_per_kernel": -3})",
      "probe");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.errors()[0].to_string().find("us_per_kernel"), std::string::npos);
  EXPECT_FALSE(parse_host_dispatch("Traceback (most recent call last):", "probe").ok());
}

}  // namespace
}  // namespace dsplan
