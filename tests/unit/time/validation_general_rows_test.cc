// How `dsplan validate` reads rows written the way papers and READMEs describe their runs,
// beyond the wording of the development rows: GPU names with their form factor and memory
// (validation/validation_hardware.cc) and measured keys with units and FLOP conventions
// (validation_measures.cc). Models that state less than their whole shape or are not dense
// transformers: validation_model_rows_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "estimator/params.h"
#include "validation/validation_rows.h"
#include "validation_row_fixtures.h"

namespace dsplan::test {
namespace {

using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024 * 1024;

SystemSpec system_of(const json& row) {
  std::vector<std::string> notes;
  auto s = validation::rows::row_system(row, notes);
  EXPECT_TRUE(s) << row["hardware"].dump() << ": " << (s ? "" : s.errors().front().message);
  return s ? *s : SystemSpec{};
}

TEST(ValidationGeneralRows, GpuFormFactorAndMemoryFromTheText) {
  // A PCIe card is a node on PCIe; the memory comes from the text.
  SystemSpec s = system_of(row_on("Tesla V100-PCIE-32GB", 4, 1, "PCIe Gen3"));
  EXPECT_EQ(s.topology, IntraTopology::pcie);
  EXPECT_EQ(s.gpu.arch, GpuArch::volta);
  EXPECT_NEAR(s.gpu.memory.v / kGiB, 31.75, 0.01);  // nvidia-smi's 32510 MiB
  s = system_of(row_on("A100 40GB PCIe", 8, 1));
  EXPECT_EQ(s.topology, IntraTopology::pcie);
  EXPECT_EQ(s.gpu.name, "a100-pcie-40gb");
  // SXM parts on their NVLink nodes: a V100 16GB is a DGX-1's, its hybrid cube mesh.
  s = system_of(row_on("V100-SXM2 16GB", 8, 1, "NVLink"));
  EXPECT_EQ(s.topology, IntraTopology::nvlink_mesh);
  EXPECT_NEAR(s.gpu.memory.v / kGiB, 15.78, 0.01);
  // An interconnect that names NVLink beside PCIe keeps the SXM node.
  EXPECT_EQ(system_of(row_on("A100 80GB", 8, 1, "NVLink/NVSwitch; PCIe Gen4 to the NICs")).topology,
            IntraTopology::nvswitch);
  // Memory unstated: the family's larger part (the row ran; the roomier card cannot call it
  // impossible). hardware.gpu_mem_gb, when given, decides.
  EXPECT_NEAR(system_of(row_on("V100", 8, 1)).gpu.memory.v / kGiB, 31.75, 0.01);
  EXPECT_EQ(system_of(row_on("A100", 8, 1)).gpu.name, "a100-80gb");
  json stated = row_on("NVIDIA A100", 8, 1);
  stated["hardware"]["gpu_mem_gb"] = 40;
  EXPECT_EQ(system_of(stated).gpu.name, "a100-40gb");
  EXPECT_EQ(system_of(row_on("H100 PCIe", 2, 1)).topology, IntraTopology::pcie);
  // A bandwidth in the text is not a memory size: 16GB stated after "900 GB/s".
  EXPECT_NEAR(system_of(row_on("V100 (900 GB/s HBM2) 16GB", 8, 1)).gpu.memory.v / kGiB, 15.78, 0.01);
  EXPECT_EQ(system_of(row_on("H100 80GB HBM3", 8, 1)).topology, IntraTopology::nvswitch);
}

TEST(ValidationGeneralRows, NodeSizeFromNumGpusOverNodes) {
  // 64 V100s on 4 nodes: 16 a node, a DGX-2.
  SystemSpec s = system_of(row_on("V100 32GB", 64, 4));
  EXPECT_EQ(s.gpus_per_node, 16);
  EXPECT_EQ(s.topology, IntraTopology::nvswitch);
  // 32 A100s on 8 nodes: 4 a node; the DGX A100's 8 NICs for 8 GPUs become 8 x 4 / 8 = 4.
  s = system_of(row_on("A100 SXM4 80GB", 32, 8));
  EXPECT_EQ(s.gpus_per_node, 4);
  EXPECT_EQ(s.nics_per_node, 4);
  // NICs the row states win: 2 x 200 Gb/s.
  s = system_of(row_on("A100 SXM4 80GB", 32, 8, "2x HDR 200 Gb/s per node"));
  EXPECT_EQ(s.nics_per_node, 2);
  EXPECT_DOUBLE_EQ(s.nic_bw.v, 200e9 / 8);
  // A single-node row on part of a node keeps the preset; nodes not given reads nothing.
  EXPECT_EQ(system_of(row_on("A100 SXM4 80GB", 4, 1)).gpus_per_node, 8);
  EXPECT_EQ(system_of(row_on("A100 SXM4 80GB", 64, nullptr)).gpus_per_node, 8);
}

// The export parts: an A800 is an A100 and an H800 an H100, with NVLink at 400 GB/s
// (200 GB/s per direction instead of 300 and 450).
TEST(ValidationGeneralRows, ExportPartsHaveTheirNvlinkRate) {
  SystemSpec s = system_of(row_on("A800 80GB", 8, 1));
  EXPECT_EQ(s.gpu.name, "a100-80gb");
  EXPECT_DOUBLE_EQ(s.intra_bw_per_gpu.v, 200e9);
  s = system_of(row_on("NVIDIA H800 SXM", 16, 2));
  EXPECT_EQ(s.gpu.arch, GpuArch::hopper);
  EXPECT_DOUBLE_EQ(s.intra_bw_per_gpu.v, 200e9);
  EXPECT_DOUBLE_EQ(system_of(row_on("H100 SXM5 80GB", 8, 1)).intra_bw_per_gpu.v, 450e9);
}

// A row without num_gpus: its layout's dp x tp x pp, else "8x" in the GPU text times nodes.
TEST(ValidationGeneralRows, GpuCountWhenNotGiven) {
  json row = row_on("A100 SXM4 80GB", 8, 4);
  row["hardware"].erase("num_gpus");
  row["parallel"]["dp"] = 4;
  row["parallel"]["tp"] = 2;
  EXPECT_DOUBLE_EQ(validation::rows::gpu_count(row, nullptr), 8);  // 4 x 2 x 1
  row["parallel"].erase("dp");
  row["hardware"]["gpu"] = "8x A100 80GB";
  std::string why;
  EXPECT_DOUBLE_EQ(validation::rows::gpu_count(row, &why), 32);  // 8 a node x 4 nodes
  EXPECT_NE(why.find("8 a node"), std::string::npos);
  row["hardware"]["num_gpus"] = 16;  // given wins
  EXPECT_DOUBLE_EQ(validation::rows::gpu_count(row, nullptr), 16);
}

TEST(ValidationGeneralRows, UnknownGpusAreSkippedWithTheKnownFamilies) {
  for (const char* gpu : {"RTX 3090", "AMD MI250X", "GH200 96GB", "L40S", "GB10"}) {
    std::vector<std::string> notes;
    auto s = validation::rows::row_system(row_on(gpu, 8, 1), notes);
    ASSERT_FALSE(s) << gpu;
    EXPECT_NE(s.errors().front().message.find("not recognised"), std::string::npos);
    EXPECT_NE(s.errors().front().hint.find("H200, B200 and B300 (DGX B200, DGX B300), GB200 and GB300"),
              std::string::npos);
  }
}

// A DGX B200 row maps to the dgx-b200 preset (its 180 GB part, 8 GPUs a node, NVLS).
TEST(ValidationGeneralRows, B200RowsMapToTheDgxB200) {
  const SystemSpec s = system_of(row_on("B200 SXM 180GB", 16, 2));
  EXPECT_EQ(s.name, "dgx-b200");
  EXPECT_EQ(s.gpu.arch, GpuArch::blackwell);
  EXPECT_EQ(s.gpus_per_node, 8);
  EXPECT_TRUE(s.nvls);
}

// A GB200 row maps to one GB200 NVL72 rack a node (72 GPUs on NVLink 5 with NVLS), its
// 186 GB part; the "nodes" such a row states are 4-GPU compute trays, which do not
// shrink the NVLink domain (16 trays of 4 stay one 72-GPU node), and "B200" inside
// "GB200" does not make it a DGX B200.
TEST(ValidationGeneralRows, Gb200RowsMapToAnNvl72Rack) {
  const SystemSpec s = system_of(row_on("GB200 186GB", 64, 16));
  EXPECT_EQ(s.name, "gb200-nvl72");
  EXPECT_EQ(s.gpu.name, "gb200-186gb");
  EXPECT_EQ(s.gpus_per_node, 72);
  EXPECT_EQ(s.nics_per_node, 72);
  EXPECT_TRUE(s.nvls);
  EXPECT_DOUBLE_EQ(s.intra_bw_per_gpu.v, 900e9);
}

// GB300 rows map to a GB300 NVL72 rack the same way, and "B300" rows to a DGX B300 (with
// the row's 8 GPUs a node).
TEST(ValidationGeneralRows, BlackwellUltraRows) {
  const SystemSpec r = system_of(row_on("GB300 288GB", 64, 16));
  EXPECT_EQ(r.name, "gb300-nvl72");
  EXPECT_EQ(r.gpus_per_node, 72);
  const SystemSpec b = system_of(row_on("B300 288GB", 64, 8));
  EXPECT_EQ(b.name, "dgx-b300");
  EXPECT_EQ(b.gpu.name, "b300-288gb");
  EXPECT_EQ(b.gpus_per_node, 8);
}

TEST(ValidationGeneralRows, MeasuredKeysWithTheirUnits) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  row["measured"] = {{"step_time_s", 1.5}};
  validation::ValidationCase c = case_of(row);
  ASSERT_EQ(c.measured.size(), 1u);
  EXPECT_EQ(c.measured[0].kind, validation::MeasureKind::step_time);
  EXPECT_DOUBLE_EQ(c.measured[0].value, 1.5);
  row["measured"] = {{"elapsed_time_per_iteration_ms", 1500}};
  EXPECT_DOUBLE_EQ(case_of(row).measured[0].value, 1.5);
  row["measured"] = {{"tokens_per_s_per_gpu", 3000}};
  c = case_of(row);
  ASSERT_EQ(c.measured.size(), 1u);
  EXPECT_EQ(c.measured[0].kind, validation::MeasureKind::tokens_per_s);
  EXPECT_TRUE(c.measured[0].per_gpu);
  // The prediction: tokens/s of the job over its 8 GPUs.
  Evaluation e;
  e.tokens_per_s = 24000;
  EXPECT_DOUBLE_EQ(validation::predicted_throughput(c, c.measured[0], e), 3000);
  row["measured"] = {{"tokens_per_s", 24000}};
  c = case_of(row);
  EXPECT_FALSE(c.measured[0].per_gpu);
  EXPECT_DOUBLE_EQ(validation::predicted_throughput(c, c.measured[0], e), 24000);
  // A step time wins over the throughputs derived from it.
  row["measured"] = {{"iteration_time_ms", 900}, {"tokens_per_s", 24000}, {"tflops_per_gpu", 100}};
  c = case_of(row);
  ASSERT_EQ(c.measured.size(), 1u);
  EXPECT_EQ(c.measured[0].kind, validation::MeasureKind::step_time);
  // Memory under other names: the figure its name says, GB and GiB as 1024 MiB.
  row["measured"] = {{"iteration_time_ms", 900},
                     {"max_memory_reserved_GiB", 70},
                     {"peak_memory_GB", 60},
                     {"nvidia_smi_memory_MiB", 75000}};
  c = case_of(row);
  ASSERT_EQ(c.measured.size(), 4u);
  for (const auto& m : c.measured) {
    if (m.label == "max_memory_reserved_GiB") {
      EXPECT_EQ(m.figure, validation::MemoryFigure::reserved);
    }
    if (m.label == "max_memory_reserved_GiB") {
      EXPECT_DOUBLE_EQ(m.value, 70 * 1024);
    }
    if (m.label == "peak_memory_GB") {
      EXPECT_EQ(m.figure, validation::MemoryFigure::allocated);
    }
    if (m.label == "nvidia_smi_memory_MiB") {
      EXPECT_EQ(m.figure, validation::MemoryFigure::device);
    }
  }
  // A non-numeric value is not a measurement.
  row["measured"] = {{"tflops_per_gpu", "about 100"}};
  auto set = validation::load_validation(json::array({row}), "t.json");
  ASSERT_TRUE(set);
  EXPECT_TRUE(set->cases.empty());
  ASSERT_EQ(set->skipped.size(), 1u);
}

TEST(ValidationGeneralRows, FlopConventionsNamedInTheRow) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  row["measured"] = {{"tflops_per_gpu", 150}};
  // Unstated: model FLOPs as PaLM and Megatron count them, attention not halved. For this
  // GPT (h = 2048, 4h MLP, 16 heads of 128) the linears are 12 h^2 a layer, so a sample is
  // 72 s l h^2 (1 + s/6h + V/12lh) = 72 * 2048 * 24 * 4194304 * (1 + 0.1666667 + 0.0851860)
  // = 1.4843e13 * 1.2518527 = 1.8581e13 FLOPs (dsplan's own count halves the s/6h term).
  validation::ValidationCase c = case_of(row);
  EXPECT_EQ(c.flops, validation::FlopConvention::source_formula);
  ASSERT_TRUE(c.source_flops_per_sample);
  EXPECT_NEAR(*c.source_flops_per_sample / 1.8581e13, 1, 1e-3);
  Evaluation e;
  e.tflops_per_gpu = 140;
  e.hw_tflops_per_gpu = 180;
  // Over a 1 s step of 8 samples on 8 GPUs: 18.58 TFLOP/s each.
  e.cfg.micro_batch = 1;
  e.cfg.dp = 8;
  e.time.step = Seconds(1);
  EXPECT_NEAR(validation::predicted_throughput(c, c.measured[0], e), 18.58, 0.02);
  row["notes"] = "TFLOP/s are hardware FLOPs (HFU)";
  c = case_of(row);
  EXPECT_EQ(c.flops, validation::FlopConvention::hardware);
  EXPECT_DOUBLE_EQ(validation::predicted_throughput(c, c.measured[0], e), 180);
  // Narayanan et al.'s formula without the recompute pass, F=72:
  // 72 * s * l * h^2 * (1 + s/6h + V/16lh) with s = 2048, l = 24, h = 2048, V = 50257
  // = 72 * 2048 * 24 * 4194304 * (1 + 0.1666667 + 0.0639114) = 1.4843e13 * 1.2305781 = 1.8266e13.
  row["notes"] = "F=72 per sample";
  c = case_of(row);
  ASSERT_TRUE(c.source_flops_per_sample);
  EXPECT_NEAR(*c.source_flops_per_sample / 1.8266e13, 1, 1e-3);
  // 6N with the row's parameter count: 6 * 1.3e9 * 2048 = 1.59744e13 per sample; over a
  // 1 s step of 8 samples on 8 GPUs, 15.97 TFLOP/s each.
  row["notes"] = "model FLOPs = 6ND";
  row["model"]["params_B"] = 1.3;
  c = case_of(row);
  ASSERT_TRUE(c.source_flops_per_sample);
  EXPECT_DOUBLE_EQ(*c.source_flops_per_sample, 6 * 1.3e9 * 2048);
  EXPECT_NEAR(validation::predicted_throughput(c, c.measured[0], e), 15.97, 0.01);
  // "6 nodes" does not name 6N: the unstated count.
  row["notes"] = "ran on 6 nodes";
  c = case_of(row);
  ASSERT_TRUE(c.source_flops_per_sample);
  EXPECT_NEAR(*c.source_flops_per_sample / 1.8581e13, 1, 1e-3);
  // An aggregate PFLOP/s is per GPU over the job: 1.2 PFLOP/s on 8 GPUs = 150 TFLOP/s.
  row["measured"] = {{"aggregate_pflops", 1.2}};
  EXPECT_DOUBLE_EQ(case_of(row).measured[0].value, 150);
}

// A row whose stated counts are not numbers, whose sequence or measured figure is out of
// range, with no id, or with an id given before in the file, is skipped with the field
// named; an unknown precision is priced as fp32 and says so.
TEST(ValidationGeneralRows, MalformedFieldsSkipTheRowByName) {
  auto first_skip = [](const json& rows) {
    auto set = validation::load_validation(rows, "t.json");
    EXPECT_TRUE(set.ok());
    return set && !set->skipped.empty() ? set->skipped.front().message : std::string();
  };
  json row = row_on("A100 80GB", 8, 1);
  row["hardware"]["num_gpus"] = "one";
  EXPECT_EQ(first_skip(json::array({row})),
            "/hardware/num_gpus: num_gpus must be a number, got \"one\" (a count, or leave the key out)");
  row = row_on("A100 80GB", 8, 1);
  row["model"]["seq_len"] = 1e9;
  EXPECT_NE(first_skip(json::array({row})).find("/model/seq_len: seq_len 1000000000.0 is out of range"),
            std::string::npos);
  row = row_on("A100 80GB", 8, 1);
  row["measured"] = {{"tflops_per_gpu", 1e308}};
  EXPECT_NE(first_skip(json::array({row})).find("/measured/tflops_per_gpu"), std::string::npos);
  row = row_on("A100 80GB", 8, 1);
  row["id"] = nullptr;
  EXPECT_NE(first_skip(json::array({row})).find("/id: row has no id"), std::string::npos);
  const json ok = row_on("A100 80GB", 8, 1);
  auto twice = validation::load_validation(json::array({ok, ok}), "t.json");
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(twice->cases.size(), 1u);
  ASSERT_EQ(twice->skipped.size(), 1u);
  EXPECT_NE(twice->skipped.front().message.find("id given twice"), std::string::npos);
  row = row_on("A100 80GB", 8, 1);
  row["parallel"]["precision"] = "fp13";
  const auto c = case_of(row);
  EXPECT_EQ(c.request.space.run.precision, Precision::fp32);
  EXPECT_NE(std::find_if(
                c.assumptions.begin(), c.assumptions.end(),
                [](const std::string& a) { return a.find("\"fp13\" names no dtype") != std::string::npos; }),
            c.assumptions.end());
}

}  // namespace
}  // namespace dsplan::test
