// Reads a committed raw-records fixture (tests/data/calibrate/*.json) for the calibration
// tests, failing the test that calls it when the file does not read or parse.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "calibrate/records.h"
#include "core/json_reader.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/gemm.h"

namespace dsplan::testing {

inline RawRecords load_records(const std::string& file) {
  auto text = read_text_file(file);
  EXPECT_TRUE(text.ok());
  auto j = parse_json_text(*text, file);
  EXPECT_TRUE(j.ok());
  auto r = parse_records(*j, file);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.errors()[0].to_string());
  return r.ok() ? *r : RawRecords{};
}

// Records measured on a real GPU whose name contains `gpu`, with `sms` SMs and `gemms` GEMM
// records.
inline void expect_measurement_of(const RawRecords& r, const std::string& gpu, int sms, std::size_t gemms) {
  EXPECT_EQ(r.provenance.kind, "measurement");
  EXPECT_EQ(r.provenance.sm_count, sms);
  EXPECT_NE(r.provenance.gpu_name.find(gpu), std::string::npos) << r.provenance.gpu_name;
  EXPECT_EQ(r.gemm.size(), gemms);
}

// The measured TFLOP/s of one recorded GEMM shape; a shape that is not recorded fails the test.
inline double recorded_tflops(const RawRecords& r, GemmDtype d, std::int64_t m, std::int64_t n,
                              std::int64_t k) {
  for (const auto& g : r.gemm)
    if (g.dtype == d && g.m == m && g.n == n && g.k == k) return g.tflops;
  ADD_FAILURE() << m << "x" << n << "x" << k << " not recorded";
  return 0;
}

// log(model time / measured time) of the datasheet GEMM model (default efficiencies) for
// every aligned bf16 record of training size (>= 2 x 2048^3 FLOPs) in the given files.
inline std::vector<double> datasheet_gemm_log_ratios(const GpuSpec& gpu,
                                                     std::initializer_list<std::string> files) {
  const Efficiency eff = default_efficiency(gpu);
  std::vector<double> logs;
  for (const std::string& f : files) {
    for (const auto& g : load_records(f).gemm) {
      if (g.dtype != GemmDtype::bf16 || g.m % 8 || g.n % 8 || g.k % 8) continue;
      const double flops = 2.0 * g.m * g.n * g.k;
      if (flops < 2.0 * 2048 * 2048 * 2048) continue;
      const GemmShape s{double(g.m), double(g.n), double(g.k), 1};
      logs.push_back(
          std::log(estimate_gemm(s, Precision::bf16, gpu, eff).time.v / (flops / (g.tflops * 1e12))));
    }
  }
  return logs;
}

}  // namespace dsplan::testing
