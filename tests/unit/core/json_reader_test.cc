// The JSON reader (core/json_reader.h): every problem of a file reported, malformed text
// and duplicate keys as diagnostics with their JSON pointer, "did you mean" for choices,
// deep nesting refused before parsing, and reads of FIFOs and endless devices that end.
#include "core/json_reader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

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

// An out-of-range value is echoed as written, not rounded to six digits (2.14748e+09).
TEST(JsonReader, OutOfRangeValuesAreEchoedAsWritten) {
  auto j = parse_json_text(R"({"layers": 2147483648, "lr": 67108863.5})", "f.json");
  ASSERT_TRUE(j.ok());
  Diagnostics errs;
  JsonObjectReader r(*j, "f.json", "", errs);
  std::int64_t layers = 0;
  double lr = 0;
  r.get("layers", layers, true, 1, 1 << 20);
  r.get("lr", lr, true, 0.0, 1.0);
  ASSERT_EQ(errs.size(), 2u);
  EXPECT_EQ(errs[0].message, "value 2147483648 is out of range");
  EXPECT_EQ(errs[1].message, "value 67108863.5 is out of range");
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

// A key given twice in one object is an error at its JSON pointer: the pointer walks
// objects by key and arrays by index, scalars included ("/a/2" is the third element).
// The same key in two different objects is fine.
TEST(JsonReader, DuplicateKeyIsReportedWithItsPointer) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"layers": 24, "hidden": 8, "layers": 32})", "/layers"},
      {R"({"a": [{"x": 1}, {"x": 2, "y": 3, "y": 4}]})", "/a/1/y"},
      {R"({"a": [1, 2, {"b": {"c": 1, "c": 2}}]})", "/a/2/b/c"},
  };
  for (const auto& [text, pointer] : cases) {
    auto j = parse_json_text(text, "f.json");
    ASSERT_FALSE(j.ok()) << text;
    EXPECT_EQ(j.errors().at(0).json_path, pointer) << text;
    EXPECT_NE(j.errors().at(0).message.find("twice"), std::string::npos);
  }
  EXPECT_TRUE(parse_json_text(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 3}, {"x": 4}]})", "f.json").ok());
}

// Nesting beyond 256 levels is refused before parsing (nlohmann's parser took ~10 GB for
// 100,000 nested arrays); brackets inside strings do not count.
TEST(JsonReader, DeepNestingIsRefusedBeforeParsing) {
  auto deep = parse_json_text(std::string(100000, '[') + std::string(100000, ']'), "deep.json");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.errors().front().message.find("nested deeper than 256"), std::string::npos);
  EXPECT_TRUE(parse_json_text(std::string(256, '[') + std::string(256, ']'), "ok.json").ok());
  EXPECT_TRUE(parse_json_text(R"({"name": "[[[[ \" {{{{"})", "s.json").ok());
}

// A FIFO's open() blocks until a writer comes; read_text_file must give up instead of
// hanging (`mkfifo f; dsplan estimate --model f`), and still read a FIFO that gets written.
TEST(ReadTextFile, FifoWithoutWriterEndsInADiagnostic) {
  const auto dir = std::filesystem::temp_directory_path() / ("dsplan_fifo_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "model.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  auto silent = read_text_file_idle_limit(fifo, 200);
  const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(silent.ok());
  EXPECT_NE(silent.errors()[0].message.find("no data for 200 ms"), std::string::npos)
      << silent.errors()[0].message;
  EXPECT_LT(waited_s, 10.0);  // the 200 ms limit, not a hang

  std::thread writer([&] { std::ofstream(fifo) << R"({"layers": 2})"; });
  auto written = read_text_file_idle_limit(fifo, 10000);
  writer.join();
  ASSERT_TRUE(written.ok()) << written.errors()[0].message;
  EXPECT_EQ(*written, R"({"layers": 2})");
  std::filesystem::remove_all(dir);
}

// A character device that never ends is cut at the size cap, not read until memory runs out.
TEST(ReadTextFile, EndlessDeviceStopsAtTheCap) {
  auto zero = read_text_file("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.errors()[0].message.find("MiB"), std::string::npos) << zero.errors()[0].message;
}

}  // namespace dsplan
