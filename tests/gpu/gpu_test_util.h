// Shared by the GPU tests: a Bench opened once per test binary, and the visible skip when
// no CUDA device is present (the probe's own diagnostic is printed with the skip).
#pragma once

#include <gtest/gtest.h>

#include <iostream>

#include "calibrate/bench/bench.h"

namespace dsplan::gpu_test {

// The build's Bench and its probe result (shared by all tests of the binary).
Bench& bench();
const Expected<DeviceInfo>& device();

}  // namespace dsplan::gpu_test

// Skips the current test, loudly, when no CUDA device can be used.
#define DSPLAN_REQUIRE_GPU()                                                        \
  do {                                                                              \
    if (!::dsplan::gpu_test::device().ok()) {                                       \
      const std::string why = ::dsplan::gpu_test::device().errors()[0].message;     \
      std::cout << "SKIPPED: no CUDA device (" << why << ")" << std::endl;          \
      GTEST_SKIP() << "SKIPPED: no CUDA device (" << why << ")";                    \
    }                                                                               \
  } while (0)
