// Megatron-LM / Megatron-DeepSpeed arguments of a plan: layout and recompute, vocabulary
// padding and dropout, biases and norms, MoE and DeepEP, overlap, FP8 and attention flags.
#include <gtest/gtest.h>

#include <algorithm>

#include "confirm/ds_config.h"
#include "plan_fixtures.h"

namespace dsplan {
namespace {

using test::config;
using test::small_gpt;

TEST(MegatronArgs, LayoutAndRecompute) {
  TrainConfig c = config(1, 2, 4, 2);
  c.tp = 2;
  c.pp = 2;
  c.vpp = 3;
  c.checkpointing = Checkpointing::selective;
  c.sequence_parallel = true;
  c.flash_attention = true;
  auto a = megatron_args(c, small_gpt());
  auto value = [&](const std::string& flag) {
    for (size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == flag) return a[i + 1];
    return std::string("<absent>");
  };
  auto has = [&](const std::string& flag) { return std::find(a.begin(), a.end(), flag) != a.end(); };
  EXPECT_EQ(value("--tensor-model-parallel-size"), "2");
  EXPECT_EQ(value("--pipeline-model-parallel-size"), "2");
  EXPECT_EQ(value("--global-batch-size"), "16");  // 2 x 4 x 2
  // 12 layers / (pp 2 x vpp 3) = 2 layers per virtual stage.
  EXPECT_EQ(value("--num-layers-per-virtual-pipeline-stage"), "2");
  EXPECT_TRUE(has("--recompute-activations"));
  EXPECT_TRUE(has("--sequence-parallel"));
  // A DeepSpeed plan's flags are Megatron-DeepSpeed's, whose --use-flash-attn is v1.
  EXPECT_TRUE(has("--use-flash-attn-v2"));
  EXPECT_FALSE(has("--no-pipeline-parallel"));  // pp 2: the pipeline model
  EXPECT_TRUE(has("--bf16"));
  EXPECT_EQ(value("--zero-stage"), "1");
  EXPECT_FALSE(has("--context-parallel-size"));
  c.cp = 2;  // the global batch stays micro x gas x dp: cp ranks share each sample
  a = megatron_args(c, small_gpt());
  EXPECT_EQ(value("--context-parallel-size"), "2");
  EXPECT_EQ(value("--global-batch-size"), "16");
  EXPECT_FALSE(has("--account-for-embedding-in-pipeline-split"));
  // 10 layers on pp 2 x vpp 3: 10 + 2 = 12 units with the embedding and the loss counted,
  // 12 / 6 = 2 units per virtual stage (TrainConfig::set_pipeline_split).
  ModelSpec ten = small_gpt();
  ten.layers = 10;
  c.framework = Framework::megatron;
  ASSERT_TRUE(c.set_pipeline_split(ten.layers));
  a = megatron_args(c, ten);
  EXPECT_TRUE(has("--account-for-embedding-in-pipeline-split"));
  EXPECT_TRUE(has("--account-for-loss-in-pipeline-split"));
  EXPECT_EQ(value("--num-layers-per-virtual-pipeline-stage"), "2");
  EXPECT_FALSE(has("--pp-partition-method"));
  // An explicit split's chunks differ in size: Megatron takes the chunk count per rank.
  TrainConfig x = c;
  x.pp_first_layers = x.pp_last_layers = 1;  // 10 = 1 + 4 x 2 + 1 on 2 x 3 chunks
  x.pp_account_embedding = x.pp_account_loss = false;
  ASSERT_TRUE(x.pipeline_split_fits(ten.layers));
  a = megatron_args(x, ten);
  EXPECT_EQ(value("--num-virtual-stages-per-pipeline-rank"), "3");
  EXPECT_EQ(value("--decoder-first-pipeline-num-layers"), "1");
  EXPECT_EQ(value("--decoder-last-pipeline-num-layers"), "1");
  EXPECT_FALSE(has("--num-layers-per-virtual-pipeline-stage"));
  // Megatron-DeepSpeed names the same split by its partition method (plain 1F1B).
  c.framework = Framework::deepspeed;
  c.vpp = 1;
  a = megatron_args(c, ten);
  EXPECT_EQ(value("--pp-partition-method"), "type:transformer|embedding");
  EXPECT_FALSE(has("--account-for-embedding-in-pipeline-split"));
}

// The plan's vocabulary padding and dropout travel as Megatron's own flags, so Megatron
// (whose defaults are 128 and 0.1) and the reference workload run what was priced.
TEST(MegatronArgs, VocabularyPaddingAndDropout) {
  ModelSpec m = small_gpt();  // LayerNorm, dropout unset: trains with dropout
  auto value = [&](const std::vector<std::string>& a, const std::string& flag) {
    for (size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == flag) return a[i + 1];
    return std::string("<absent>");
  };
  auto a = megatron_args(config(1, 1, 1, 1), m);
  EXPECT_EQ(value(a, "--make-vocab-size-divisible-by"), "1");
  EXPECT_EQ(value(a, "--hidden-dropout"), "0.1");
  EXPECT_EQ(value(a, "--attention-dropout"), "0.1");
  m.vocab_pad_multiple = 128;
  m.dropout = false;
  a = megatron_args(config(1, 1, 1, 1), m);
  EXPECT_EQ(value(a, "--make-vocab-size-divisible-by"), "128");
  EXPECT_EQ(value(a, "--hidden-dropout"), "0");
  EXPECT_EQ(value(a, "--attention-dropout"), "0");
}

// Qwen2's biases on Q, K and V alone and Qwen3's query and key norms have Megatron-LM
// flags of their own; a model with every bias keeps them (no --disable-bias-linear).
// Megatron-DeepSpeed (a DeepSpeed plan) has neither: named as gaps there.
TEST(MegatronArgs, QkvBiasAndQkNorm) {
  ModelSpec m = small_gpt();
  auto has = [](const std::vector<std::string>& a, const std::string& flag) {
    return std::find(a.begin(), a.end(), flag) != a.end();
  };
  TrainConfig meg = config(1, 1, 1, 1);
  meg.framework = Framework::megatron;
  auto a = megatron_args(meg, m);
  EXPECT_FALSE(has(a, "--add-qkv-bias") || has(a, "--qk-layernorm"));
  m.linear_bias = false;
  m.qkv_bias = true;
  m.qk_norm = true;
  a = megatron_args(meg, m);
  EXPECT_TRUE(has(a, "--disable-bias-linear") && has(a, "--add-qkv-bias") && has(a, "--qk-layernorm"));
  EXPECT_TRUE(megatron_args_gaps(m).empty());  // Qwen's blocks have flags
  a = megatron_args(config(1, 1, 1, 1), m);    // framework deepspeed
  EXPECT_FALSE(has(a, "--add-qkv-bias") || has(a, "--qk-layernorm"));
  EXPECT_EQ(megatron_args_gaps(m, Framework::deepspeed).size(), 2u);
  // Gemma 2's have none for GeGLU, post-norms and the caps, which are named. Its window
  // (here over every layer) is Megatron-LM's --window-size 63,0; in every other layer, one
  // full-attention layer after each windowed one, --window-attn-skip-freq 2; over 5 of 12
  // layers no whole-number ratio, named. Megatron-DeepSpeed has no window flags.
  m.gated_mlp = true;
  m.activation = Activation::gelu;
  m.norms_per_layer = 4;
  m.attention_window = 64;
  m.logit_softcap = true;
  EXPECT_EQ(megatron_args_gaps(m).size(), 3u);
  a = megatron_args(meg, m);
  auto value = [&](const std::string& flag) {
    for (size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == flag) return a[i + 1];
    return std::string("<absent>");
  };
  EXPECT_EQ(value("--window-size"), "63,0");
  EXPECT_EQ(value("--window-attn-skip-freq"), "<absent>");
  m.window_layers = 6;
  a = megatron_args(meg, m);
  EXPECT_EQ(value("--window-attn-skip-freq"), "2");
  m.window_layers = 5;
  a = megatron_args(meg, m);
  EXPECT_EQ(value("--window-size"), "<absent>");
  EXPECT_EQ(megatron_args_gaps(m).size(), 4u);
  EXPECT_EQ(megatron_args_gaps(m, Framework::deepspeed).size(), 6u);  // + the window, the Qwen flags
}

// Block recompute: Megatron's block method with the layer count, the count as
// DeepSpeed's number_checkpoints, and the depth in the experiment name.
TEST(MegatronArgs, BlockRecompute) {
  TrainConfig c = config(1, 2, 1, 2);
  c.checkpointing = Checkpointing::block;
  c.recompute_layers = 5;
  auto a = megatron_args(c, small_gpt());
  auto value = [&](const std::string& flag) {
    for (size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == flag) return a[i + 1];
    return std::string("<absent>");
  };
  EXPECT_EQ(value("--recompute-granularity"), "full");
  EXPECT_EQ(value("--recompute-method"), "block");
  EXPECT_EQ(value("--recompute-num-layers"), "5");
  EXPECT_EQ(make_ds_config(c, small_gpt())["activation_checkpointing"]["number_checkpoints"], 5);
  EXPECT_EQ(experiment_name(c), "z1_tp1_pp1_gas1_tmbspg2_ckblock5");
}

// Megatron-Core's selective recompute modules: --recompute-granularity selective and the
// module list in place of --recompute-activations (the attention core alone), and the
// modules in the experiment name.
TEST(MegatronArgs, RecomputeModules) {
  TrainConfig c = config(1, 2, 1, 2);
  c.framework = Framework::megatron;
  c.checkpointing = Checkpointing::selective;
  auto a = megatron_args(c, small_gpt());
  EXPECT_NE(std::find(a.begin(), a.end(), "--recompute-activations"), a.end());
  c.recompute_modules = module_bit(RecomputeModule::mlp) | module_bit(RecomputeModule::core_attn);
  a = megatron_args(c, small_gpt());
  EXPECT_EQ(std::find(a.begin(), a.end(), "--recompute-activations"), a.end());
  const auto at = std::find(a.begin(), a.end(), "--recompute-modules");
  ASSERT_NE(at, a.end());
  ASSERT_LT(at + 2, a.end());
  EXPECT_EQ(*(at + 1), "core_attn");
  EXPECT_EQ(*(at + 2), "mlp");
  EXPECT_EQ(*(at - 1), "selective");
  EXPECT_EQ(experiment_name(c), "z1_tp1_pp1_gas1_tmbspg2_cksel-core_attn-mlp_megatron");
}

// DeepEP: the flex dispatcher with --moe-enable-deepep, and grouped routing's flags.
TEST(MegatronArgs, DeepEpAndGroupedRouting) {
  TrainConfig c = config(1, 2, 1, 2);
  c.framework = Framework::megatron;
  c.ep = 2;
  ModelSpec m = small_gpt();
  m.experts = 8, m.topk = 2, m.moe_ffn = 256, m.moe_groups = 4, m.moe_group_topk = 2;
  auto a = megatron_args(c, m);
  auto value = [&](const std::string& flag) {
    for (size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == flag) return a[i + 1];
    return std::string("<absent>");
  };
  EXPECT_EQ(value("--moe-token-dispatcher-type"), "alltoall");
  EXPECT_EQ(value("--moe-router-num-groups"), "4");
  EXPECT_EQ(value("--moe-router-group-topk"), "2");
  c.moe_deepep = true;
  a = megatron_args(c, m);
  EXPECT_EQ(value("--moe-token-dispatcher-type"), "flex");
  EXPECT_NE(std::find(a.begin(), a.end(), "--moe-enable-deepep"), a.end());
  EXPECT_NE(experiment_name(c).find("_deepep"), std::string::npos);
}

// Megatron-Core's overlap flags follow overlap_comm "on"; the parameter-gather overlap only
// with the distributed optimizer (zero_stage >= 1). Default and off emit neither.
TEST(MegatronArgs, OverlapFlags) {
  TrainConfig c = config(1, 2, 1, 2);
  c.framework = Framework::megatron;
  auto has = [](const std::vector<std::string>& a, const std::string& f) {
    return std::find(a.begin(), a.end(), f) != a.end();
  };
  EXPECT_FALSE(has(megatron_args(c, small_gpt()), "--overlap-grad-reduce"));
  c.zero.overlap_comm = 1;
  auto a = megatron_args(c, small_gpt());
  EXPECT_TRUE(has(a, "--overlap-grad-reduce"));
  EXPECT_TRUE(has(a, "--overlap-param-gather"));
  c.zero_stage = 0;
  a = megatron_args(c, small_gpt());
  EXPECT_TRUE(has(a, "--overlap-grad-reduce"));
  EXPECT_FALSE(has(a, "--overlap-param-gather"));
  c.zero.overlap_comm = 0;
  EXPECT_FALSE(has(megatron_args(c, small_gpt()), "--overlap-grad-reduce"));
}

// FP8 linears: TE's hybrid delayed-scaling flags after --bf16, and FP8 parameter gather with
// the distributed optimizer only (zero_stage >= 1), as dsplan prices it; the name says fp8.
TEST(MegatronArgs, Fp8Flags) {
  TrainConfig c = config(1, 2, 1, 2);
  c.framework = Framework::megatron;
  c.fp8 = true;
  auto a = megatron_args(c, small_gpt());
  const auto at = [&](const std::string& f) { return std::find(a.begin(), a.end(), f) - a.begin(); };
  ASSERT_LT(at("--fp8-format") + 1, static_cast<long>(a.size()));
  EXPECT_EQ(a[at("--fp8-format") + 1], "hybrid");
  EXPECT_LT(at("--bf16"), at("--fp8-format"));
  EXPECT_LT(at("--fp8-param-gather"), static_cast<long>(a.size()));
  EXPECT_TRUE(c.fp8_param_gather());
  EXPECT_EQ(experiment_name(c), "z1_tp1_pp1_gas1_tmbspg2_fp8_megatron");
  c.zero_stage = 0;
  a = megatron_args(c, small_gpt());
  EXPECT_FALSE(c.fp8_param_gather());
  EXPECT_EQ(at("--fp8-param-gather"), static_cast<long>(a.size()));
  EXPECT_LT(at("--fp8-format"), static_cast<long>(a.size()));
  // --fp8-param-gather arrived in Megatron-LM on 2024-09-05 (!1669 "Add native-fp8"): an
  // earlier Megatron keeps 16-bit weights under the distributed optimizer.
  c.zero_stage = 1;
  c.megatron_release = 202404;
  EXPECT_FALSE(c.fp8_param_gather());
  c.megatron_release = 202409;
  EXPECT_TRUE(c.fp8_param_gather());
}

// An MoE plan: the experts, router top-k and expert width, the ep degree with expert TP 1,
// the all-to-all dispatcher and grouped GEMMs it was priced with; the shared experts where
// the model has them; and ep in the experiment's name. A dense model gets none of them.
TEST(MegatronArgs, MixtureOfExperts) {
  TrainConfig c = config(1, 2, 1, 2);
  c.framework = Framework::megatron;
  c.ep = 4;
  ModelSpec m = small_gpt();
  m.experts = 8;
  m.topk = 2;
  m.moe_ffn = 96;
  auto a = megatron_args(c, m);
  const auto value = [&](const std::string& f) {
    const auto it = std::find(a.begin(), a.end(), f);
    return it == a.end() || it + 1 == a.end() ? std::string("none") : *(it + 1);
  };
  EXPECT_EQ(value("--num-experts"), "8");
  EXPECT_EQ(value("--moe-router-topk"), "2");
  EXPECT_EQ(value("--moe-ffn-hidden-size"), "96");
  EXPECT_EQ(value("--expert-model-parallel-size"), "4");
  EXPECT_EQ(value("--expert-tensor-parallel-size"), "1");
  EXPECT_EQ(value("--moe-token-dispatcher-type"), "alltoall");
  EXPECT_NE(std::find(a.begin(), a.end(), "--moe-grouped-gemm"), a.end());
  // The permutation as priced: Transformer Engine's fused kernels, not the atomic default.
  EXPECT_NE(std::find(a.begin(), a.end(), "--moe-permute-fusion"), a.end());
  c.moe_permute_fusion = false;  // --moe-permute-fusion off: Megatron-Core's unfused default
  a = megatron_args(c, m);
  EXPECT_EQ(std::find(a.begin(), a.end(), "--moe-permute-fusion"), a.end());
  c.moe_permute_fusion = true;
  a = megatron_args(c, m);
  EXPECT_EQ(value("--moe-shared-expert-intermediate-size"), "none");
  m.shared_ffn = 128;
  a = megatron_args(c, m);
  EXPECT_EQ(value("--moe-shared-expert-intermediate-size"), "128");
  EXPECT_EQ(experiment_name(c), "z1_tp1_pp1_gas1_tmbspg2_ep4_megatron");
  c.ep = 1;
  a = megatron_args(c, small_gpt());
  EXPECT_EQ(value("--num-experts"), "none");
}

// A pinned attention kernel becomes Megatron-Core's --attention-backend: cuDNN is TE's
// "fused" backend, FA2/FA3 its "flash" one; auto leaves the choice to Transformer Engine.
TEST(MegatronArgs, AttentionBackend) {
  TrainConfig c = config(1, 2, 1, 2);
  c.framework = Framework::megatron;
  c.flash_attention = true;
  auto backend = [&](AttentionKernel k) {
    c.attention = k;
    const auto a = megatron_args(c, small_gpt());
    const auto it = std::find(a.begin(), a.end(), "--attention-backend");
    return it == a.end() || it + 1 == a.end() ? std::string("none") : *(it + 1);
  };
  EXPECT_EQ(backend(AttentionKernel::auto_), "none");
  EXPECT_EQ(backend(AttentionKernel::cudnn), "fused");
  EXPECT_EQ(backend(AttentionKernel::fa2), "flash");
  EXPECT_EQ(backend(AttentionKernel::fa3), "flash");
  c.flash_attention = false;
  EXPECT_EQ(backend(AttentionKernel::cudnn), "none");
}

// The Triton kernel is Megatron-DeepSpeed's own flag, in place of --use-flash-attn.
TEST(MegatronArgs, TritonAttention) {
  TrainConfig c = config(1, 2, 1, 2);
  c.framework = Framework::megatron;
  c.flash_attention = true;
  c.attention = AttentionKernel::triton;
  const auto a = megatron_args(c, small_gpt());
  auto has = [&](const std::string& f) { return std::find(a.begin(), a.end(), f) != a.end(); };
  EXPECT_TRUE(has("--use-flash-attn-triton"));
  EXPECT_FALSE(has("--use-flash-attn"));
  EXPECT_FALSE(has("--attention-backend"));
}

// A Llama-style model in a DeepSpeed plan's flags (Megatron-DeepSpeed's arguments.py) and
// in a Megatron plan's (Megatron-LM's): GQA, RMSNorm and rotary spelled each tool's way; the
// pipeline model off at pp 1 in Megatron-DeepSpeed; the position table at least the
// sequence (both assert it); Megatron-LM's 16-bit gradient reduction and fused loss where
// priced; SGD named.
TEST(MegatronArgs, EachToolsSpellings) {
  ModelSpec m = small_gpt();
  m.kv_heads = 4;
  m.norm = NormKind::rmsnorm;
  m.position = PositionKind::rotary;
  m.gated_mlp = true;
  m.activation = Activation::silu;
  auto has = [](const std::vector<std::string>& a, const std::string& flag) {
    return std::find(a.begin(), a.end(), flag) != a.end();
  };
  auto value = [](const std::vector<std::string>& a, const std::string& flag) {
    for (size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == flag) return a[i + 1];
    return std::string("<absent>");
  };
  TrainConfig ds = config(1, 1, 1, 8);
  ds.seq_len = 4096;  // past the model's 1024 positions
  auto a = megatron_args(ds, m);
  EXPECT_EQ(value(a, "--num-key-value-heads"), "4");
  EXPECT_EQ(value(a, "--normalization"), "rmsnorm");
  EXPECT_TRUE(has(a, "--use-rotary-position-embeddings"));
  EXPECT_TRUE(has(a, "--no-pipeline-parallel"));
  EXPECT_FALSE(has(a, "--group-query-attention") || has(a, "--position-embedding-type"));
  EXPECT_EQ(value(a, "--max-position-embeddings"), "4096");
  TrainConfig meg = ds;
  meg.framework = Framework::megatron;
  meg.megatron_fp32_grads = false;
  meg.cross_entropy = CrossEntropy::jit_fused;
  meg.optimizer = Optimizer::sgd;
  a = megatron_args(meg, m);
  EXPECT_EQ(value(a, "--num-query-groups"), "4");
  EXPECT_TRUE(has(a, "--group-query-attention"));
  EXPECT_EQ(value(a, "--normalization"), "RMSNorm");
  EXPECT_EQ(value(a, "--position-embedding-type"), "rope");
  EXPECT_FALSE(has(a, "--no-pipeline-parallel"));
  EXPECT_TRUE(has(a, "--grad-reduce-in-bf16"));
  EXPECT_TRUE(has(a, "--cross-entropy-loss-fusion"));
  EXPECT_EQ(value(a, "--optimizer"), "sgd");
}

}  // namespace
}  // namespace dsplan
