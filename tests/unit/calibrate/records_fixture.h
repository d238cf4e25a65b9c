// Reads a committed raw-records fixture (tests/data/calibrate/*.json) for the calibration
// tests, failing the test that calls it when the file does not read or parse.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "calibrate/records.h"
#include "core/json_reader.h"

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

// The measured TFLOP/s of one recorded GEMM shape; a shape that is not recorded fails the test.
inline double recorded_tflops(const RawRecords& r, GemmDtype d, std::int64_t m, std::int64_t n,
                              std::int64_t k) {
  for (const auto& g : r.gemm)
    if (g.dtype == d && g.m == m && g.n == n && g.k == k) return g.tflops;
  ADD_FAILURE() << m << "x" << n << "x" << k << " not recorded";
  return 0;
}

}  // namespace dsplan::testing
