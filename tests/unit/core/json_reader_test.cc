#include "core/json_reader.h"

#include <gtest/gtest.h>

namespace dsplan {

TEST(JsonReader, ReportsEveryProblemNotJustTheFirst) {
  auto j = parse_json_text(R"({"layers": -1, "hiden": 4, "name": 3})", "f.json");
  ASSERT_TRUE(j.ok());
  Diagnostics errs;
  JsonObjectReader r(*j, "f.json", "", errs);
  int layers = 0, hidden = 0;
  std::string name;
  r.get("layers", layers, true, 1, 1000);
  r.get("hidden", hidden, true, 1, 1 << 20);
  r.get("name", name, false);
  r.finish();
  // layers out of range, hidden missing, name wrong type, hiden unknown.
  ASSERT_EQ(errs.size(), 4u);
  EXPECT_EQ(errs[0].json_path, "/layers");
  EXPECT_EQ(errs[1].json_path, "/hidden");
  EXPECT_EQ(errs[1].message, "missing required key");
  EXPECT_EQ(errs[2].json_path, "/name");
  EXPECT_EQ(errs[3].json_path, "/hiden");
  EXPECT_NE(errs[3].hint.find("did you mean \"hidden\""), std::string::npos);
}

TEST(JsonReader, MalformedTextIsADiagnosticNotAnException) {
  auto j = parse_json_text("{\"a\": 1,", "bad.json");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.errors()[0].file, "bad.json");
  EXPECT_NE(j.errors()[0].message.find("malformed JSON"), std::string::npos);
}

TEST(JsonReader, ChoiceSuggestsNearestAllowedValue) {
  auto j = parse_json_text(R"({"norm": "rmsnrom"})", "");
  Diagnostics errs;
  JsonObjectReader r(*j, "", "", errs);
  int idx = -1;
  EXPECT_FALSE(r.get_choice("norm", idx, true, {"layernorm", "rmsnorm"}));
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_NE(errs[0].hint.find("did you mean \"rmsnorm\""), std::string::npos);
}

}  // namespace dsplan
