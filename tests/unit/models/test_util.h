// Shared helpers for the model-loading tests: load a fixture under tests/data/models and
// flatten diagnostics to one string for substring checks.
#pragma once

#include <string>

#include "core/json/model_json.h"
#include "core/json_reader.h"

namespace dsplan::test {

inline std::string fixture(const std::string& rel) {
  return std::string(DSPLAN_TEST_DATA) + "/models/" + rel;
}

inline Expected<ModelSpec> load(const std::string& rel) {
  return resolve_model(fixture(rel), read_text_file);
}

inline std::string all_errors(const Diagnostics& errs) {
  std::string s;
  for (const auto& e : errs) s += e.to_string() + "\n";
  return s;
}

// Every error of parsing `j` as a dsplan model JSON (as from `file`), or "" when it parses.
inline std::string model_errors(const Json& j, const std::string& file) {
  auto m = parse_model_json(j, file);
  return m.ok() ? std::string() : all_errors(m.errors());
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace dsplan::test
