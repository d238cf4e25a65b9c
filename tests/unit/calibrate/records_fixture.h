// Reads a committed raw-records fixture (tests/data/calibrate/*.json) for the calibration
// tests, failing the test that calls it when the file does not read or parse.
#pragma once

#include <string>

#include <gtest/gtest.h>

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

}  // namespace dsplan::testing
