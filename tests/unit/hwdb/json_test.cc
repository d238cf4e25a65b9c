// GPU/system JSON: round trips through *_to_json, and each bad fixture in tests/data/hw
// gives the diagnostic (file, JSON pointer, message, hint) a user needs.
#include <gtest/gtest.h>

#include "hwdb/hwdb.h"

namespace dsplan {
namespace {

std::string fixture(const std::string& name) { return std::string(DSPLAN_TEST_DATA) + "/hw/" + name; }

Expected<SystemSpec> load(const std::string& name) {
  std::string path = fixture(name);
  Expected<std::string> text = read_text_file(path);
  if (!text) return text.errors();
  Expected<Json> j = parse_json_text(*text, path);
  if (!j) return j.errors();
  return parse_system_json(*j, path);
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b)); }

void expect_same(const GpuSpec& a, const GpuSpec& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.arch, b.arch);
  EXPECT_TRUE(close(a.memory.v, b.memory.v));
  EXPECT_TRUE(close(a.hbm_bw.v, b.hbm_bw.v));
  EXPECT_EQ(a.sm_count, b.sm_count);
  EXPECT_EQ(a.tensor_clock_MHz, b.tensor_clock_MHz);
  EXPECT_EQ(a.boost_clock_MHz, b.boost_clock_MHz);
  EXPECT_EQ(a.fp16_tc_flop_per_clk_sm, b.fp16_tc_flop_per_clk_sm);
  EXPECT_EQ(a.bf16_tc_flop_per_clk_sm, b.bf16_tc_flop_per_clk_sm);
  EXPECT_EQ(a.tf32_tc_flop_per_clk_sm, b.tf32_tc_flop_per_clk_sm);
  EXPECT_EQ(a.fp32_flop_per_clk_sm, b.fp32_flop_per_clk_sm);
  EXPECT_TRUE(close(a.l2.v, b.l2.v));
  EXPECT_EQ(a.nvlink_links, b.nvlink_links);
  EXPECT_TRUE(close(a.nvlink_bw_per_link.v, b.nvlink_bw_per_link.v));
  EXPECT_EQ(a.pcie_gen, b.pcie_gen);
  EXPECT_TRUE(close(a.pcie_bw.v, b.pcie_bw.v));
  EXPECT_EQ(a.tdp_W, b.tdp_W);
}

void expect_same(const SystemSpec& a, const SystemSpec& b) {
  EXPECT_EQ(a.name, b.name);
  expect_same(a.gpu, b.gpu);
  EXPECT_EQ(a.gpus_per_node, b.gpus_per_node);
  EXPECT_EQ(a.topology, b.topology);
  EXPECT_TRUE(close(a.intra_bw_per_gpu.v, b.intra_bw_per_gpu.v));
  EXPECT_EQ(a.nvls, b.nvls);
  EXPECT_EQ(a.nics_per_node, b.nics_per_node);
  EXPECT_TRUE(close(a.nic_bw.v, b.nic_bw.v));
  EXPECT_TRUE(close(a.host_memory.v, b.host_memory.v));
  EXPECT_TRUE(close(a.host_mem_bw.v, b.host_mem_bw.v));
  EXPECT_EQ(a.cpu_cores, b.cpu_cores);
}

TEST(HwdbJson, EveryPresetRoundTrips) {
  for (const auto& n : gpu_preset_names()) {
    GpuSpec g = *gpu_preset(n);
    auto back = parse_gpu_json(gpu_to_json(g), "round-trip");
    ASSERT_TRUE(back.ok()) << n << ": " << back.errors()[0].to_string();
    SCOPED_TRACE(n);
    expect_same(g, *back);
  }
  for (const auto& n : system_preset_names()) {
    SystemSpec s = *system_preset(n);
    auto back = parse_system_json(system_to_json(s), "round-trip");
    ASSERT_TRUE(back.ok()) << n << ": " << back.errors()[0].to_string();
    SCOPED_TRACE(n);
    expect_same(s, *back);
  }
}

TEST(HwdbJson, WrittenValuesKeepTheirUnits) {
  Json j = system_to_json(*system_preset("dgx-a100"));
  EXPECT_EQ(j["intra_GBps_per_gpu"].get<double>(), 300);
  EXPECT_EQ(j["nic_Gbps"].get<double>(), 200);  // 25e9 B/s x 8 / 1e9
  EXPECT_EQ(j["host_mem_GBps"].get<double>(), 409.6);
  EXPECT_EQ(j["gpu"]["memory_GiB"].get<double>(), 80);
  EXPECT_EQ(j["gpu"]["pcie_GBps"].get<double>(), 31.5);
  EXPECT_TRUE(j["gpu"]["tdp_W"].is_number_integer());  // whole numbers print as 400, not 400.0
}

TEST(HwdbJson, MalformedFileNamesTheFile) {
  auto s = load("malformed.json");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.errors()[0].file, fixture("malformed.json"));
  EXPECT_NE(s.errors()[0].message.find("malformed JSON"), std::string::npos);
}

TEST(HwdbJson, UnknownKeySuggestsTheKnownOne) {
  auto s = load("unknown_key.json");
  ASSERT_FALSE(s.ok());
  ASSERT_EQ(s.errors().size(), 1u);
  EXPECT_EQ(s.errors()[0].json_path, "/nic_gbps");
  EXPECT_EQ(s.errors()[0].message, "unknown key \"nic_gbps\"");
  EXPECT_EQ(s.errors()[0].hint, "did you mean \"nic_Gbps\"?");
}

TEST(HwdbJson, NegativeBandwidthIsRejected) {
  auto s = load("negative_bandwidth.json");
  ASSERT_FALSE(s.ok());
  ASSERT_EQ(s.errors().size(), 1u);
  EXPECT_EQ(s.errors()[0].json_path, "/intra_GBps_per_gpu");
  EXPECT_EQ(s.errors()[0].message, "must be greater than 0, found -450");
}

TEST(HwdbJson, GpuPresetTypoSuggestsTheName) {
  auto s = load("gpu_typo.json");
  ASSERT_FALSE(s.ok());
  ASSERT_EQ(s.errors().size(), 1u);
  EXPECT_EQ(s.errors()[0].json_path, "/gpu");
  EXPECT_EQ(s.errors()[0].message, "unknown GPU preset \"a100-80g\"");
  EXPECT_NE(s.errors()[0].hint.find("did you mean \"a100-80gb\"?"), std::string::npos);
}

TEST(HwdbJson, NonNumericValueNamesTheNestedPath) {
  auto s = load("non_numeric.json");
  ASSERT_FALSE(s.ok());
  ASSERT_EQ(s.errors().size(), 1u);
  EXPECT_EQ(s.errors()[0].json_path, "/gpu/hbm_GBps");
  EXPECT_EQ(s.errors()[0].message, "expected a number, found a string");
  EXPECT_EQ(s.errors()[0].hint, "GB/s (1e9 bytes/s), not bytes/s");
}

TEST(HwdbJson, EveryErrorIsReportedAtOnce) {
  auto s = load("many_errors.json");
  ASSERT_FALSE(s.ok());
  std::vector<std::string> paths;
  for (const auto& e : s.errors()) paths.push_back(e.json_path);
  // gpus_per_node 0, topology "torus", nic_Gbps a string, host_memory_GiB 0, colour unknown
  std::vector<std::string> want{"/gpus_per_node", "/topology", "/nic_Gbps", "/host_memory_GiB", "/colour"};
  EXPECT_EQ(paths, want);
}

TEST(HwdbJson, BidirectionalIntraRateIsCaught) {
  auto s = load("bidirectional_intra.json");  // 600 on an A100 with 12 x 25 GB/s links
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.errors()[0].json_path, "/intra_GBps_per_gpu");
  EXPECT_NE(s.errors()[0].message.find("300 GB/s per direction"), std::string::npos);
}

TEST(HwdbJson, BaseTypoSuggestsTheSystemPreset) {
  auto s = load("base_typo.json");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.errors()[0].json_path, "/base");
  EXPECT_NE(s.errors()[0].hint.find("did you mean \"dgx-a100\"?"), std::string::npos);
}

TEST(HwdbJson, NotAnObjectIsOneClearError) {
  auto s = load("not_an_object.json");
  ASSERT_FALSE(s.ok());
  ASSERT_EQ(s.errors().size(), 1u);
  EXPECT_EQ(s.errors()[0].message, "expected a JSON object, found an array");
}

// A host (the GPUs a launcher starts on one OS image) must tile the node: a GB200 NVL72
// rack is 18 hosts of 4; 5 does not divide 72.
TEST(HwdbJson, HostsMustTileTheNode) {
  auto s = parse_system_json(Json{{"base", "gb200-nvl72"}, {"name", "r"}, {"gpus_per_host", 5}}, "inline");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.errors()[0].json_path, "/gpus_per_host");
  EXPECT_NE(s.errors()[0].message.find("does not divide gpus_per_node 72"), std::string::npos);
  auto r = parse_system_json(Json{{"base", "gb200-nvl72"}, {"name", "r"}}, "inline");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->gpus_per_host, 4);
  EXPECT_EQ(r->launcher_gpus(), 4);
  EXPECT_EQ(system_preset("dgx-h100")->launcher_gpus(), 8);  // a DGX is one host
  EXPECT_EQ(system_to_json(*r)["gpus_per_host"], 4);
  EXPECT_FALSE(system_to_json(*system_preset("dgx-h100")).contains("gpus_per_host"));
}

TEST(HwdbJson, BaseOverridesOnlyTheGivenKeys) {
  Json j = {{"base", "a100-80gb"}, {"name", "mine"}, {"hbm_GBps", 1800}};
  auto g = parse_gpu_json(j, "inline");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->name, "mine");
  EXPECT_DOUBLE_EQ(in_GBps(g->hbm_bw), 1800);
  EXPECT_EQ(g->sm_count, 108);  // from the preset
}

TEST(HwdbJson, NvlinkLinksNeedARate) {
  Json j = gpu_to_json(*gpu_preset("a100-80gb"));
  j["nvlink_GBps_per_link"] = 0;
  auto g = parse_gpu_json(j, "f.json", "/gpu");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.errors()[0].json_path, "/gpu/nvlink_GBps_per_link");
}

TEST(HwdbJson, ImplausiblyLargeRateHintsAtTheUnit) {
  Json j = gpu_to_json(*gpu_preset("a100-80gb"));
  j["hbm_GBps"] = 2.039e12;  // bytes/s written where GB/s was meant
  auto g = parse_gpu_json(j, "f.json");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.errors()[0].message.find("implausibly large"), std::string::npos);
  EXPECT_NE(g.errors()[0].hint.find("GB/s"), std::string::npos);
}

TEST(HwdbJson, ExampleClusterFilesLoad) {
  for (const char* f : {"a100-pcie-workstation.json", "dgx-h100-roce-200g.json", "custom-gpu-inline.json"}) {
    std::string path = std::string(DSPLAN_SOURCE_DIR) + "/configs/clusters/" + f;
    auto text = read_text_file(path);
    ASSERT_TRUE(text.ok()) << path;
    auto j = parse_json_text(*text, path);
    ASSERT_TRUE(j.ok()) << path;
    auto s = parse_system_json(*j, path);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.errors()[0].to_string());
  }
}

}  // namespace
}  // namespace dsplan
