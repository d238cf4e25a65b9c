// resolve_hardware: system presets, GPU presets as generic nodes, files through the
// reader callback, the --gpus-per-node / --inter-node-gbps overrides, and describe().
#include <gtest/gtest.h>

#include <map>

#include "hwdb/hwdb.h"

namespace dsplan {
namespace {

// An in-memory file system, so these tests never touch the disk.
FileReader fake_fs(std::map<std::string, std::string> files) {
  return [files](const std::string& p) -> Expected<std::string> {
    auto it = files.find(p);
    if (it == files.end()) return Diagnostic{p, "", "cannot open file", ""};
    return it->second;
  };
}

const FileReader kNoFiles = fake_fs({});

double nic_Gbps(const SystemSpec& s) { return s.nic_bw.v * 8 / 1e9; }

TEST(HwdbResolve, SystemPresetIsReturnedAsIs) {
  auto s = resolve_hardware("dgx-h100", std::nullopt, std::nullopt, kNoFiles);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->name, "dgx-h100");
  EXPECT_EQ(s->gpus_per_node, 8);
}

TEST(HwdbResolve, SxmGpuBecomesAnNvswitchNode) {
  auto s = resolve_hardware("a100-80gb", std::nullopt, std::nullopt, kNoFiles);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->gpus_per_node, 8);
  EXPECT_EQ(s->topology, IntraTopology::nvswitch);
  EXPECT_DOUBLE_EQ(in_GBps(s->intra_bw_per_gpu), 300);  // 12 links x 25 GB/s
  EXPECT_FALSE(s->nvls);
  EXPECT_EQ(s->nics_per_node, 8);  // one 200 Gb/s NIC per GPU
  EXPECT_DOUBLE_EQ(nic_Gbps(*s), 200);
  EXPECT_TRUE(resolve_hardware("h100-80gb", std::nullopt, std::nullopt, kNoFiles)->nvls);
}

TEST(HwdbResolve, PcieGpuBecomesAPcieNode) {
  auto s = resolve_hardware("a100-pcie-40gb", 4, std::nullopt, kNoFiles);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->topology, IntraTopology::pcie);
  EXPECT_DOUBLE_EQ(in_GBps(s->intra_bw_per_gpu), 31.5);  // PCIe Gen4 x16
  EXPECT_EQ(s->gpus_per_node, 4);
  EXPECT_EQ(s->nics_per_node, 4);
  EXPECT_DOUBLE_EQ(in_GiB(s->host_memory), 512);  // 4 x 128 GiB
  EXPECT_EQ(s->cpu_cores, 64);                    // 4 x 16
}

TEST(HwdbResolve, InterNodeBandwidthIsPerNodeSplitOverNics) {
  // dgx-a100 has 8 NICs; 800 Gb/s per node -> 100 Gb/s each.
  auto s = resolve_hardware("dgx-a100", std::nullopt, 800.0, kNoFiles);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->nics_per_node, 8);
  EXPECT_DOUBLE_EQ(nic_Gbps(*s), 100);
  EXPECT_DOUBLE_EQ(s->nics_per_node * nic_Gbps(*s), 800);
}

TEST(HwdbResolve, GpusPerNodeOverridesAPreset) {
  auto s = resolve_hardware("dgx-h100", 4, 400.0, kNoFiles);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->gpus_per_node, 4);
  EXPECT_EQ(s->nics_per_node, 8);       // the box keeps its NICs
  EXPECT_DOUBLE_EQ(nic_Gbps(*s), 50);   // 400 / 8
}

// An override keeps a rack's 4-GPU hosts where they still tile the node (64 GPUs = 16
// trays) and otherwise takes the largest host size that does: gcd(4, 6) = 2.
TEST(HwdbResolve, GpusPerNodeOverrideKeepsHostsThatTile) {
  EXPECT_EQ(resolve_hardware("gb200", 64, std::nullopt, kNoFiles)->gpus_per_host, 4);
  EXPECT_EQ(resolve_hardware("gb200", 6, std::nullopt, kNoFiles)->gpus_per_host, 2);
  EXPECT_EQ(resolve_hardware("dgx-h100", 4, std::nullopt, kNoFiles)->launcher_gpus(),
            4);  // no hosts: the node
}

TEST(HwdbResolve, BadOverridesAreReportedTogether) {
  auto s = resolve_hardware("dgx-a100", 0, -5.0, kNoFiles);
  ASSERT_FALSE(s.ok());
  ASSERT_EQ(s.errors().size(), 2u);
  EXPECT_NE(s.errors()[0].message.find("--gpus-per-node"), std::string::npos);
  EXPECT_NE(s.errors()[1].message.find("--inter-node-gbps"), std::string::npos);
  EXPECT_FALSE(resolve_hardware("dgx-a100", 73, std::nullopt, kNoFiles).ok());
  // 72, a GB200 NVL72 rack's NVLink domain, is the largest node.
  EXPECT_TRUE(resolve_hardware("dgx-a100", 72, std::nullopt, kNoFiles).ok());
  auto rack = resolve_hardware("GB200", std::nullopt, std::nullopt, kNoFiles);  // the family alias
  ASSERT_TRUE(rack.ok());
  EXPECT_EQ(rack->name, "gb200-nvl72");
  EXPECT_EQ(resolve_hardware("gb300", std::nullopt, std::nullopt, kNoFiles)->name, "gb300-nvl72");
  EXPECT_EQ(resolve_hardware("B300", std::nullopt, std::nullopt, kNoFiles)->name, "dgx-b300");
}

TEST(HwdbResolve, UnknownNameSuggestsSystemsAndGpus) {
  auto s = resolve_hardware("dgx-a10O", std::nullopt, std::nullopt, kNoFiles);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.errors()[0].message, "unknown hardware \"dgx-a10O\"");
  EXPECT_NE(s.errors()[0].hint.find("did you mean \"dgx-a100\"?"), std::string::npos);
  auto g = resolve_hardware("h200-140gb", std::nullopt, std::nullopt, kNoFiles);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.errors()[0].hint.find("did you mean \"h200-141gb\"?"), std::string::npos);
}

// Preset names in any case, and a GPU family alone for its DGX node (V100: the DGX-1 with
// 16 GB cards, the smaller part, so that a plan fits either).
TEST(HwdbResolve, CaseAndFamilyNamesReachThePresets) {
  const std::pair<const char*, const char*> cases[] = {
      {"DGX-H100", "dgx-h100"}, {"h100", "dgx-h100"},  {"A100", "dgx-a100"},
      {"h200", "dgx-h200"},     {"V100", "dgx1-v100"}, {"A100-40GB", "generic-a100-40gb"}};
  for (const auto& [given, expected] : cases) {
    auto s = resolve_hardware(given, std::nullopt, std::nullopt, kNoFiles);
    ASSERT_TRUE(s.ok()) << given;
    EXPECT_EQ(s->name, expected) << given;
  }
  EXPECT_NEAR(resolve_hardware("v100", std::nullopt, std::nullopt, kNoFiles)->gpu.memory.v / (1 << 30), 15.78,
              0.01);
  EXPECT_FALSE(resolve_hardware("h100 sxm", std::nullopt, std::nullopt, kNoFiles).ok());
}

TEST(HwdbResolve, FileIsReadThroughTheCallback) {
  std::string text = R"({"base": "dgx-a100", "name": "mine", "nics_per_node": 4})";
  auto s = resolve_hardware("clusters/mine.json", std::nullopt, std::nullopt,
                            fake_fs({{"clusters/mine.json", text}}));
  ASSERT_TRUE(s.ok()) << s.errors()[0].to_string();
  EXPECT_EQ(s->name, "mine");
  EXPECT_EQ(s->nics_per_node, 4);
  EXPECT_EQ(s->gpu.name, "a100-80gb");
}

TEST(HwdbResolve, GpuFileBecomesAGenericNode) {
  std::string text = R"({"base": "h100-80gb", "name": "h100-slow", "tensor_clock_MHz": 1600})";
  auto s = resolve_hardware("h.json", 4, std::nullopt, fake_fs({{"h.json", text}}));
  ASSERT_TRUE(s.ok()) << s.errors()[0].to_string();
  EXPECT_EQ(s->gpu.name, "h100-slow");
  EXPECT_EQ(s->gpus_per_node, 4);
  EXPECT_EQ(s->nics_per_node, 4);
  // 132 x 4096 x 1.6 GHz = 865.1 TFLOP/s
  EXPECT_NEAR(in_TFLOPS(s->gpu.matmul_peak(Precision::bf16)), 865.1, 0.05);
}

TEST(HwdbResolve, MissingFileAndBadFileAreDiagnostics) {
  auto m = resolve_hardware("nope.json", std::nullopt, std::nullopt, kNoFiles);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.errors()[0].file, "nope.json");
  auto b = resolve_hardware("./b.json", std::nullopt, std::nullopt, fake_fs({{"./b.json", "{"}}));
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.errors()[0].message.find("malformed JSON"), std::string::npos);
}

TEST(HwdbResolve, DescribeIsOneLineWithTheKeyFigures) {
  std::string d = describe(*system_preset("dgx-a100"));
  EXPECT_EQ(d.find('\n'), std::string::npos);
  EXPECT_EQ(d,
            "dgx-a100: 8x a100-80gb (80.0 GiB, 312 TFLOP/s bf16, 2039 GB/s HBM) per node, "
            "NVSwitch 300 GB/s/dir per GPU, 8x 200 Gb/s NICs (1600 Gb/s per node)");
  // Volta has no bf16 tensor cores, so the fp16 peak is shown.
  EXPECT_NE(describe(*system_preset("dgx2")).find("125 TFLOP/s fp16"), std::string::npos);
  EXPECT_NE(describe(*resolve_hardware("h100-80gb", std::nullopt, std::nullopt, kNoFiles))
                .find("generic node"),
            std::string::npos);
}

}  // namespace
}  // namespace dsplan
