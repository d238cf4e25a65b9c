// Rows the `dsplan validate` tests build (validation_general_rows_test.cc,
// validation_model_rows_test.cc): a GPT test row on the named GPUs, and the one validation
// case a row loads as.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "validation/validation_rows.h"

namespace dsplan::test {

using nlohmann::json;

inline json row_on(const std::string& gpu, int gpus, json nodes, const std::string& interconnect = "") {
  return json{
      {"id", "t"},
      {"source", "a test row"},
      {"model",
       {{"name", "GPT test"},
        {"layers", 24},
        {"hidden", 2048},
        {"heads", 16},
        {"seq_len", 2048},
        {"vocab", 50257}}},
      {"hardware", {{"gpu", gpu}, {"num_gpus", gpus}, {"nodes", nodes}, {"interconnect", interconnect}}},
      {"parallel",
       {{"tp", 1},
        {"pp", 1},
        {"zero_stage", 1},
        {"micro_batch", 1},
        {"global_batch", gpus},
        {"precision", "fp16"},
        {"other", "DeepSpeed"}}},
      {"measured", {{"iteration_time_ms", 1000}}}};
}

inline validation::ValidationCase case_of(const json& row) {
  auto set = validation::load_validation(json::array({row}), "t.json");
  EXPECT_TRUE(set && set->cases.size() == 1u) << row["measured"].dump();
  return set && !set->cases.empty() ? set->cases.front() : validation::ValidationCase{};
}

}  // namespace dsplan::test
