// Reading the committed measurement files under tests/data/ from a unit test: a missing or
// malformed file is a test failure that names the file, and the caller gets an empty JSON
// value (so its loops run zero times and its count checks fail too).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/json_reader.h"

namespace dsplan::test {

inline Json load_test_data(const std::string& relative_path) {
  const std::string path = std::string(DSPLAN_SOURCE_DIR) + "/tests/data/" + relative_path;
  const Expected<std::string> text = read_text_file(path);
  if (!text) {
    ADD_FAILURE() << "cannot read " << path;
    return Json();
  }
  Expected<Json> j = parse_json_text(*text, path);
  if (!j) {
    ADD_FAILURE() << "malformed " << path;
    return Json();
  }
  return std::move(*j);
}

}  // namespace dsplan::test
