// How `dsplan validate` reads rows written the way papers and READMEs describe their runs,
// beyond the wording of the development rows: GPU names with their form factor and memory
// (validation/validation_hardware.cc), measured keys with units and FLOP conventions
// (validation_measures.cc), and models that state less than their whole shape or are not
// dense transformers (validation_model.cc).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "estimator/params.h"
#include "validation/validation_rows.h"

namespace dsplan::test {
namespace {

using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024 * 1024;

json row_on(const std::string& gpu, int gpus, json nodes, const std::string& interconnect = "") {
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

validation::ValidationCase case_of(const json& row) {
  auto set = validation::load_validation(json::array({row}), "t.json");
  EXPECT_TRUE(set && set->cases.size() == 1u) << row["measured"].dump();
  return set && !set->cases.empty() ? set->cases.front() : validation::ValidationCase{};
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

std::vector<std::string> notes;

ModelSpec model_of(const json& row) {
  notes.clear();
  auto r = validation::rows::row_request(row, notes);
  EXPECT_TRUE(r) << row["model"].dump() << ": " << (r ? "" : r.errors().front().message);
  return r ? r->model : ModelSpec{};
}

TEST(ValidationGeneralRows, LlamaRowsWithoutTheirMlpWidth) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  row["model"] = {{"name", "Llama-2-7b"}, {"layers", 32},    {"hidden", 4096},
                  {"heads", 32},          {"seq_len", 4096}, {"params_B", 6.74}};
  // Parameters with an MLP width f, untied 32000-word embeddings, no biases:
  // 2 * 32000 * 4096 + 32 * (4 * 4096^2 + 3 * 4096 f + 2 * 4096) + 4096
  // = 262,144,000 + 32 * (67,117,056 + 12,288 f) + 4096; 6.74e9 solves to f = 11,006.6,
  // which rounds to 11,008 (Llama 2 7B's intermediate_size).
  ModelSpec m = model_of(row);
  EXPECT_EQ(m.ffn_hidden, 11008);
  EXPECT_TRUE(m.gated_mlp);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.linear_bias);
  EXPECT_FALSE(has_dropout(m));
  EXPECT_EQ(m.vocab, 32000);
  // RoPE, no position table (a row that names its position keeps it).
  EXPECT_EQ(m.position, PositionKind::rotary);
  // Without params_B, Llama's rule: 256 * ceil(8 * 4096 / 3 / 256) = 256 * 43 = 11008.
  row["model"].erase("params_B");
  EXPECT_EQ(model_of(row).ffn_hidden, 11008);
  // Llama 3 70B without kv_heads or its MLP width: 8 KV heads, and the width that carries
  // 70.6e9 parameters is its 28672.
  row["model"] = {{"name", "Llama 3 70B"}, {"layers", 80},    {"hidden", 8192},
                  {"heads", 64},           {"seq_len", 8192}, {"params_B", 70.6}};
  m = model_of(row);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.vocab, 128256);
  EXPECT_EQ(m.ffn_hidden, 28672);
}

// A row that names a model dsplan has as a preset, and gives no shape, takes the preset.
TEST(ValidationGeneralRows, NamedModelWithoutAShapeTakesThePreset) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  row["model"] = {{"name", "meta-llama/Llama-2-7b-hf"}, {"seq_len", 4096}};
  const ModelSpec m = model_of(row);
  EXPECT_EQ(m.name, "llama2-7b");
  EXPECT_EQ(m.ffn_hidden, 11008);
  row["model"]["name"] = "an unnamed research model";
  std::vector<std::string> n;
  EXPECT_FALSE(validation::rows::row_request(row, n));
}

// A non-Llama row whose name and shape are a preset's takes the preset (Mistral's gated MLP,
// GQA and RMSNorm the row's fields leave out); a different shape keeps the shape-only model.
TEST(ValidationGeneralRows, NamedModelWithThePresetShapeTakesThePreset) {
  json row = row_on("H100 SXM5 80GB", 8, 1);
  row["model"] = {{"name", "Mistral 7B"}, {"layers", 32}, {"hidden", 4096}, {"heads", 32}, {"seq_len", 4096}};
  ModelSpec m = model_of(row);
  EXPECT_EQ(m.name, "mistral-7b");
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_TRUE(m.gated_mlp);
  row["model"]["layers"] = 30;
  m = model_of(row);
  EXPECT_NE(m.name, "mistral-7b");
  EXPECT_FALSE(m.gated_mlp);
}

// A file may hold its rows in an object, under "rows"; anything else is one clear error.
TEST(ValidationGeneralRows, RowsUnderAnObject) {
  auto set = validation::load_validation(
      json{{"description", "a table"}, {"rows", json::array({row_on("A100", 8, 1)})}}, "t.json");
  ASSERT_TRUE(set);
  EXPECT_EQ(set->cases.size(), 1u);
  EXPECT_FALSE(validation::load_validation(json{{"rows", 3}}, "t.json"));
  EXPECT_FALSE(validation::load_validation(json{{"a", 1}}, "t.json"));
}

// A width given without saying the MLP is gated: Qwen-72B-like numbers (80 layers of 8192,
// ffn 24576, vocab 152064, 72.3 B). Two matrices give 80 x (4 x 8192^2 + 2 x 8192 x 24576)
// = 53.7 B + 2 x 1.25 B embeddings = 56.2 B; three give 80 x (268.4 M + 604.0 M) = 69.8 B
// + 2.5 B = 72.3 B: gated. The same width with a GPT's 13 B count stays ungated.
TEST(ValidationGeneralRows, GatedMlpFromTheParameterCount) {
  json row = row_on("H100 SXM5 80GB", 8, 1);
  row["model"] = {{"name", "Qwen-72B"},  {"layers", 80},    {"hidden", 8192},           {"heads", 64},
                  {"ffn_hidden", 24576}, {"vocab", 152064}, {"tied_embeddings", false}, {"seq_len", 4096},
                  {"params_B", 72.3}};
  EXPECT_TRUE(model_of(row).gated_mlp);
  row["model"] = {{"name", "GPT 13B"},   {"layers", 40},   {"hidden", 5120},  {"heads", 40},
                  {"ffn_hidden", 20480}, {"vocab", 50257}, {"seq_len", 2048}, {"params_B", 12.9}};
  EXPECT_FALSE(model_of(row).gated_mlp);
}

// Keys under other tools' names: Hugging Face config names, Megatron's and DeepSpeed's
// arguments. A row giving both keeps the format's own key.
TEST(ValidationGeneralRows, KeysUnderOtherToolsNames) {
  json row = {{"id", "t"},
              {"source", "a test row"},
              {"model",
               {{"name", "GPT test"},
                {"num_hidden_layers", 24},
                {"hidden_size", 2048},
                {"num_attention_heads", 16},
                {"seq_length", 2048},
                {"vocab_size", 50257}}},
              {"hardware", {{"gpu", "A100 SXM4 80GB"}, {"world_size", 16}, {"num_nodes", 2}}},
              {"parallel",
               {{"tensor_model_parallel_size", 2},
                {"pipeline_model_parallel_size", 2},
                {"micro_batch_size", 2},
                {"global_batch_size", 64},
                {"zero", 1},
                {"checkpoint_activations", true},
                {"precision", "bf16"}}},
              {"measured", {{"iteration_time_ms", 1000}}}};
  validation::ValidationCase c = case_of(row);
  EXPECT_EQ(c.request.model.layers, 24);
  EXPECT_EQ(c.request.cluster.num_gpus, 16);
  EXPECT_EQ(c.request.space.tp[0], 2);
  EXPECT_EQ(c.request.space.pp[0], 2);
  EXPECT_EQ(c.request.space.micro_batch[0], 2);
  EXPECT_EQ(c.request.space.grad_accum[0], 8);  // 64 / (2 x dp 4)
  EXPECT_EQ(c.request.space.zero[0], 1);
  EXPECT_EQ(c.request.space.checkpointing[0], Checkpointing::full);
  row["model"]["layers"] = 12;  // the format's own key wins
  EXPECT_EQ(case_of(row).request.model.layers, 12);
}

TEST(ValidationGeneralRows, ModelsDsplanDoesNotPriceAreSkipped) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  for (const char* name :
       {"T5-large", "flan-t5-xl", "BART large", "Mixtral 8x7B", "Switch-Base", "GPT MoE 1.3B"}) {
    row["model"]["name"] = name;
    std::vector<std::string> n;
    EXPECT_FALSE(validation::rows::row_request(row, n)) << name;
  }
  // A dense shape whose parameters are far from the row's count: 24 x 2048 GPT is 1.3B, not 13B.
  row["model"]["name"] = "GPT test";
  row["model"]["params_B"] = 13;
  std::vector<std::string> n;
  auto r = validation::rows::row_request(row, n);
  ASSERT_FALSE(r);
  EXPECT_NE(r.errors().front().message.find("25%"), std::string::npos);
  row["model"]["params_B"] = 1.3;
  EXPECT_TRUE(validation::rows::row_request(row, n));
}

TEST(ValidationGeneralRows, HeadsInferredFromTheWidth) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  row["model"].erase("heads");
  row["model"]["hidden"] = 2560;  // 2560 / 128 = 20 heads (GPT-3 2.7B: 32 x 80; both 2560 wide)
  EXPECT_EQ(model_of(row).heads, 20);
  row["model"]["hidden"] = 768;  // below 2048: head dimension 64, 12 heads
  EXPECT_EQ(model_of(row).heads, 12);
  row["model"]["heads"] = nullptr;  // null reads as not given
  EXPECT_EQ(model_of(row).heads, 12);
}

TEST(ValidationGeneralRows, PrecisionSpelledOut) {
  const std::pair<const char*, Precision> cases[] = {
      {"bfloat16", Precision::bf16}, {"BF16 mixed", Precision::bf16},
      {"float16", Precision::fp16},  {"mixed precision", Precision::fp16},
      {"AMP", Precision::fp16},      {"fp32", Precision::fp32},
      {"", Precision::fp32},         {"example", Precision::fp32}};  // "example" has no "amp" word
  for (const auto& [text, expected] : cases) {
    TrainConfig run;
    std::vector<std::string> n;
    validation::rows::precision(text, "", run, n);
    EXPECT_EQ(run.precision, expected) << text;
  }
}

TEST(ValidationGeneralRows, RecomputeAndOffloadAsAnswers) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  std::vector<std::string> n;
  for (json yes : {json(true), json("yes"), json("enabled"), json("full")}) {
    row["parallel"]["recompute"] = yes;
    EXPECT_EQ(validation::rows::row_request(row, n)->space.checkpointing[0], Checkpointing::full)
        << yes.dump();
  }
  for (json no : {json(false), json("no"), json("none"), json(nullptr)}) {
    row["parallel"]["recompute"] = no;
    EXPECT_EQ(validation::rows::row_request(row, n)->space.checkpointing[0], Checkpointing::none)
        << no.dump();
  }
  row["parallel"]["zero_stage"] = 3;
  row["parallel"]["offload"] = "cpu";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.offload[0], Offload::optimizer);
  row["parallel"]["offload"] = "all";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.offload[0], Offload::all);
  row["parallel"]["offload"] = "none";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.offload[0], Offload::none);
  row["parallel"]["offload"] = "nvme";  // not modelled: the row is refused, naming the words
  auto r = validation::rows::row_request(row, n);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.errors().front().json_path, "/parallel/offload");
}

// A ZeRO stage not given as a number: the stage the text names, FSDP's sharding strategy
// (FULL_SHARD, its default, is stage 3), else none.
TEST(ValidationGeneralRows, ZeroStageFromTheText) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  std::vector<std::string> n;
  row["parallel"].erase("zero_stage");
  const std::pair<const char*, int> cases[] = {
      {"DeepSpeed ZeRO-3", 3}, {"ZeRO stage 2", 2},       {"deepspeed zero_stage: 1", 1}, {"DeepSpeed", 0},
      {"PyTorch FSDP", 3},     {"FSDP SHARD_GRAD_OP", 2}, {"DeepSpeed ZeRO-Offload", 0},  {"ZeRO13 typo", 0}};
  for (const auto& [other, stage] : cases) {
    row["parallel"]["other"] = other;
    auto r = validation::rows::row_request(row, n);
    ASSERT_TRUE(r) << other;
    EXPECT_EQ(r->space.zero[0], stage) << other;
  }
  row["parallel"]["zero_stage"] = 1;  // a number given wins
  row["parallel"]["other"] = "ZeRO-3 in an earlier run";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.zero[0], 1);
}

TEST(ValidationGeneralRows, EngineNamedInParallelOther) {
  json row = row_on("A100 SXM4 80GB", 8, 1);
  std::vector<std::string> n;
  row["parallel"]["other"] = "Megatron-LM, TP within the node";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.run.framework, Framework::megatron);
  row["parallel"]["other"] = "Megatron-DeepSpeed, ZeRO-1";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.run.framework, Framework::deepspeed);
  row["parallel"]["other"] = "PyTorch DDP, torchrun";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.run.framework, Framework::ddp);
  row["parallel"]["other"] = "fairscale OSS + ShardedDDP";
  EXPECT_EQ(validation::rows::row_request(row, n)->space.run.framework, Framework::deepspeed);
}

}  // namespace
}  // namespace dsplan::test
