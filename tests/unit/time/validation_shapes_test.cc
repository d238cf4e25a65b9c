// Every validation row that states its parameter count (model.params_B) must map to a
// model of that size: shared/validation/published.json, and every file of validation/
// (held-out, real runs, evidence). A row whose mapped shape drops part of the model is
// priced as a different model; until session 30 the Llama rows without "gated_mlp" lost a
// third of their MLP (14 held-out rows, 20% optimistic), and nothing flagged it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "estimator/params.h"
#include "validation/validation_rows.h"

namespace dsplan::test {
namespace {

using nlohmann::json;

// Rows state a rounded or nominal size ("1.3B", "15B" for Nemotron-4 15B's 15.6 B): 5% covers
// the roundings and the vocabulary padding (128 x TP rows) the sources count or leave out.
constexpr double kTolerance = 0.05;

std::vector<std::string> validation_files() {
  std::vector<std::string> files = {DSPLAN_VALIDATION_FILE};
  namespace fs = std::filesystem;
  for (const char* dir : {"holdout", "real", "evidence"})
    for (const auto& e : fs::directory_iterator(std::string(DSPLAN_SOURCE_DIR) + "/validation/" + dir))
      if (e.path().extension() == ".json") files.push_back(e.path().string());
  return files;
}

TEST(ValidationShapes, MappedModelsHaveTheRowsParameterCount) {
  int checked = 0;
  for (const std::string& file : validation_files()) {
    std::ifstream in(file);
    ASSERT_TRUE(in.good()) << file;
    const json doc = json::parse(in);
    const json& rows = doc.is_object() && doc.contains("rows") ? doc["rows"] : doc;
    for (const json& row : rows) {
      if (!row.is_object() || !row.contains("model") || !row["model"].is_object()) continue;
      const json& m = row["model"];
      if (!m.contains("params_B") || !m["params_B"].is_number()) continue;
      const double stated = m["params_B"].get<double>() * 1e9;
      if (stated <= 0) continue;
      std::vector<std::string> notes;
      auto req = validation::rows::row_request(row, notes);
      if (!req) continue;  // rows that do not map are reported by validate
      const double priced = static_cast<double>(total_params(req->model));
      ++checked;
      EXPECT_NEAR(priced / stated, 1.0, kTolerance)
          << row.value("id", "?") << " in " << std::filesystem::path(file).filename().string() << ": priced "
          << priced / 1e9 << " B parameters, the row states " << stated / 1e9 << " B";
    }
  }
  // published.json and the held-out files carry params_B on most rows.
  EXPECT_GT(checked, 100);
}

}  // namespace
}  // namespace dsplan::test
