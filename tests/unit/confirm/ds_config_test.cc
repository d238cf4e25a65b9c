// ds_config generation, experiment names, Megatron flags and command rewriting.
#include "confirm/ds_config.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "confirm/command.h"
#include "confirm/fsdp_config.h"

namespace dsplan {
namespace {

ModelSpec small_gpt() {
  ModelSpec m;
  m.name = "gpt-small";
  m.layers = 12;
  m.hidden = 768;
  m.heads = 12;
  m.kv_heads = 12;
  m.head_dim = 64;
  m.ffn_hidden = 3072;
  m.vocab = 50257;
  m.max_positions = 1024;
  return m;
}

TrainConfig config(int stage, int mbs, int gas, int dp) {
  TrainConfig c;
  c.zero_stage = stage;
  c.micro_batch = mbs;
  c.grad_accum = gas;
  c.dp = dp;
  return c;
}

TEST(DsConfig, BatchArithmetic) {
  // train_batch = mbs x gas x dp = 4 x 3 x 8 = 96.
  Json ds = make_ds_config(config(1, 4, 3, 8), small_gpt());
  EXPECT_EQ(ds["train_batch_size"], 96);
  EXPECT_EQ(ds["train_micro_batch_size_per_gpu"], 4);
  EXPECT_EQ(ds["gradient_accumulation_steps"], 3);
  // TP and PP do not enter the data-parallel batch: 2 x 1 x 2 = 4 with tp=4, pp=2.
  TrainConfig c = config(0, 2, 1, 2);
  c.tp = 4;
  c.pp = 2;
  EXPECT_EQ(make_ds_config(c, small_gpt())["train_batch_size"], 4);
}

TEST(DsConfig, PrecisionBlocks) {
  TrainConfig c = config(0, 1, 1, 1);
  c.precision = Precision::bf16;
  Json ds = make_ds_config(c, small_gpt());
  EXPECT_TRUE(ds["bf16"]["enabled"].get<bool>());
  EXPECT_FALSE(ds.contains("fp16"));
  c.precision = Precision::fp16;
  ds = make_ds_config(c, small_gpt());
  EXPECT_TRUE(ds["fp16"]["enabled"].get<bool>());
  EXPECT_EQ(ds["fp16"]["loss_scale"], 0);  // dynamic
  EXPECT_FALSE(ds.contains("bf16"));
  c.precision = Precision::fp32;
  ds = make_ds_config(c, small_gpt());
  EXPECT_FALSE(ds.contains("fp16"));
  EXPECT_FALSE(ds.contains("bf16"));
}

TEST(DsConfig, ZeroStagesHaveTheirKeys) {
  for (int stage = 0; stage <= 3; ++stage) {
    Json z = make_ds_config(config(stage, 1, 1, 4), small_gpt())["zero_optimization"];
    EXPECT_EQ(z["stage"], stage);
    EXPECT_EQ(z["reduce_bucket_size"], 500000000);
    // DeepSpeed's default: overlap_comm only at stage 3.
    EXPECT_EQ(z["overlap_comm"].get<bool>(), stage == 3) << stage;
    EXPECT_EQ(z.contains("allgather_bucket_size"), stage == 1 || stage == 2) << stage;
    EXPECT_EQ(z.contains("stage3_prefetch_bucket_size"), stage == 3) << stage;
    EXPECT_EQ(z.contains("stage3_max_live_parameters"), stage == 3) << stage;
    EXPECT_FALSE(z.contains("offload_optimizer"));
  }
  TrainConfig c = config(2, 1, 1, 4);
  c.zero.overlap_comm = 1;
  c.zero.reduce_bucket_elems = 5e7;
  Json z = make_ds_config(c, small_gpt())["zero_optimization"];
  EXPECT_TRUE(z["overlap_comm"].get<bool>());
  EXPECT_EQ(z["reduce_bucket_size"], 50000000);
}

TEST(DsConfig, OffloadBlocksPerStage) {
  TrainConfig c = config(2, 1, 1, 4);
  c.offload = Offload::optimizer;
  Json z = make_ds_config(c, small_gpt())["zero_optimization"];
  EXPECT_EQ(z["offload_optimizer"]["device"].get<std::string>(), "cpu");
  EXPECT_TRUE(z["offload_optimizer"]["pin_memory"].get<bool>());
  EXPECT_FALSE(z.contains("offload_param"));

  c.zero_stage = 3;
  c.offload = Offload::all;
  z = make_ds_config(c, small_gpt())["zero_optimization"];
  EXPECT_EQ(z["offload_optimizer"]["device"].get<std::string>(), "cpu");
  EXPECT_EQ(z["offload_param"]["device"].get<std::string>(), "cpu");

  // Stage 2 cannot offload parameters; stage 0 cannot offload at all; both are noted.
  c.zero_stage = 2;
  z = make_ds_config(c, small_gpt())["zero_optimization"];
  EXPECT_TRUE(z.contains("offload_optimizer"));
  EXPECT_FALSE(z.contains("offload_param"));
  EXPECT_EQ(ds_config_notes(c).size(), 1u);
  c.zero_stage = 0;
  z = make_ds_config(c, small_gpt())["zero_optimization"];
  EXPECT_FALSE(z.contains("offload_optimizer"));
  EXPECT_EQ(ds_config_notes(c).size(), 2u);
}

TEST(DsConfig, ActivationCheckpointing) {
  TrainConfig c = config(1, 1, 1, 2);
  EXPECT_FALSE(make_ds_config(c, small_gpt()).contains("activation_checkpointing"));
  c.checkpointing = Checkpointing::full;
  c.tp = 2;
  c.pp = 4;
  Json ac = make_ds_config(c, small_gpt())["activation_checkpointing"];
  // DeepSpeed's checkpoint options are written as the plan priced them: off unless chosen.
  EXPECT_FALSE(ac["partition_activations"].get<bool>());
  EXPECT_FALSE(ac["cpu_checkpointing"].get<bool>());
  EXPECT_EQ(ac["number_checkpoints"], 3);  // 12 layers / 4 stages
  EXPECT_TRUE(ac["contiguous_memory_optimization"].get<bool>());
  auto has_arg = [&](const std::string& a) {
    const auto args = megatron_args(c, small_gpt());
    return std::find(args.begin(), args.end(), a) != args.end();
  };
  EXPECT_FALSE(has_arg("--deepspeed-activation-checkpointing"));
  c.ds_partition_activations = true;
  c.ds_cpu_checkpointing = true;
  ac = make_ds_config(c, small_gpt())["activation_checkpointing"];
  EXPECT_TRUE(ac["partition_activations"].get<bool>());
  EXPECT_TRUE(ac["cpu_checkpointing"].get<bool>());
  // Megatron-DeepSpeed's flags override the ds_config keys, so the launch names them.
  EXPECT_TRUE(has_arg("--deepspeed-activation-checkpointing"));
  EXPECT_TRUE(has_arg("--partition-activations"));
  EXPECT_TRUE(has_arg("--checkpoint-in-cpu"));
  // At TP 1 there is nothing to partition.
  c.tp = 1;
  EXPECT_FALSE(
      make_ds_config(c, small_gpt())["activation_checkpointing"]["partition_activations"].get<bool>());
  EXPECT_FALSE(has_arg("--partition-activations"));
}

TEST(DsConfig, Optimizers) {
  TrainConfig c = config(1, 1, 1, 1);
  Json ds = make_ds_config(c, small_gpt());
  EXPECT_EQ(ds["optimizer"]["type"].get<std::string>(), "AdamW");
  EXPECT_DOUBLE_EQ(ds["optimizer"]["params"]["betas"][1].get<double>(), 0.95);
  c.optimizer = Optimizer::sgd;
  EXPECT_EQ(make_ds_config(c, small_gpt())["optimizer"]["type"], "SGD");
  c.optimizer = Optimizer::adam_8bit;
  EXPECT_FALSE(make_ds_config(c, small_gpt()).contains("optimizer"));
  EXPECT_FALSE(ds_config_notes(c).empty());
  EXPECT_EQ(ds["gradient_clipping"], 1.0);
  EXPECT_FALSE(ds["wall_clock_breakdown"].get<bool>());
}

TEST(ExperimentName, AutotunerStyleWithExtensions) {
  TrainConfig c = config(1, 4, 1, 8);
  EXPECT_EQ(experiment_name(c), "z1_tp1_pp1_gas1_tmbspg4");
  c.vpp = 2;
  c.pp = 2;
  c.checkpointing = Checkpointing::full;
  c.flash_attention = true;
  c.sequence_parallel = true;
  c.offload = Offload::optimizer;
  c.precision = Precision::fp16;
  EXPECT_EQ(experiment_name(c), "z1_tp1_pp2_gas1_tmbspg4_vpp2_ckfull_flash_sp_offopt_fp16");
}

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
  EXPECT_TRUE(has("--use-flash-attn"));
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
TEST(MegatronArgs, QkvBiasAndQkNorm) {
  ModelSpec m = small_gpt();
  auto has = [](const std::vector<std::string>& a, const std::string& flag) {
    return std::find(a.begin(), a.end(), flag) != a.end();
  };
  auto a = megatron_args(config(1, 1, 1, 1), m);
  EXPECT_FALSE(has(a, "--add-qkv-bias") || has(a, "--qk-layernorm"));
  m.linear_bias = false;
  m.qkv_bias = true;
  m.qk_norm = true;
  a = megatron_args(config(1, 1, 1, 1), m);
  EXPECT_TRUE(has(a, "--disable-bias-linear") && has(a, "--add-qkv-bias") && has(a, "--qk-layernorm"));
  EXPECT_TRUE(megatron_args_gaps(m).empty());  // Qwen's blocks have flags
  // Gemma 2's have none: GeGLU, post-norms, the window and the caps are named.
  m.gated_mlp = true;
  m.activation = Activation::gelu;
  m.norms_per_layer = 4;
  m.attention_window = 64;
  m.logit_softcap = true;
  EXPECT_EQ(megatron_args_gaps(m).size(), 4u);
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

TEST(FsdpConfig, ShardingPrecisionAndLaunch) {
  TrainConfig c;
  c.framework = Framework::fsdp;
  c.precision = Precision::bf16;
  c.zero_stage = 3;
  c.dp = 16;
  c.micro_batch = 2;
  c.grad_accum = 4;
  c.checkpointing = Checkpointing::block;
  c.recompute_layers = 8;
  Json j = make_fsdp_config(c);
  EXPECT_EQ(j["sharding_strategy"], "FULL_SHARD");
  EXPECT_EQ(j["mixed_precision"]["param_dtype"], "bfloat16");
  EXPECT_EQ(j["mixed_precision"]["reduce_dtype"], "bfloat16");  // PyTorch's default
  EXPECT_EQ(j["global_batch"], 2 * 4 * 16);
  EXPECT_EQ(j["activation_checkpointing"]["blocks_per_rank"], 8);
  EXPECT_EQ(j["cpu_offload"]["offload_params"], false);
  EXPECT_EQ(j["tensor_parallel_degree"], 1);
  c.fsdp_reduce_fp32 = true;
  c.fsdp_hybrid = true;
  c.offload = Offload::all;
  j = make_fsdp_config(c);
  EXPECT_EQ(j["sharding_strategy"], "HYBRID_SHARD");
  EXPECT_EQ(j["mixed_precision"]["reduce_dtype"], "float32");
  EXPECT_EQ(j["cpu_offload"]["offload_params"], true);
  c.zero_stage = 2;
  EXPECT_EQ(make_fsdp_config(c)["sharding_strategy"], "_HYBRID_SHARD_ZERO2");
  c.fsdp_hybrid = false;
  EXPECT_EQ(make_fsdp_config(c)["sharding_strategy"], "SHARD_GRAD_OP");
  c.zero_stage = 1;
  EXPECT_EQ(make_fsdp_config(c)["sharding_strategy"], "NO_SHARD");
  EXPECT_EQ(make_fsdp_config(c)["zero_redundancy_optimizer"], true);
  // FSDP2 has no sharding strategy: stage 3 reshards after forward, stage 2 does not, and
  // hybrid is a 2-D mesh; MixedPrecisionPolicy has no buffer dtype.
  c.fsdp_version = 2;
  c.zero_stage = 3;
  j = make_fsdp_config(c);
  EXPECT_EQ(j["fsdp_version"], 2);
  EXPECT_FALSE(j.contains("sharding_strategy"));
  EXPECT_FALSE(j["mixed_precision"].contains("buffer_dtype"));
  EXPECT_EQ(j["mixed_precision"]["reduce_dtype"], "float32");
  EXPECT_EQ(j["fully_shard"]["reshard_after_forward"], true);
  EXPECT_EQ(j["fully_shard"]["mesh"], "1-D over the data-parallel ranks");
  c.zero_stage = 2;
  c.fsdp_hybrid = true;
  j = make_fsdp_config(c);
  EXPECT_EQ(j["fully_shard"]["reshard_after_forward"], false);
  EXPECT_EQ(j["fully_shard"]["mesh"], "2-D (replicate across nodes, shard within a node)");
  // 16 GPUs on 8-GPU nodes: two nodes of eight.
  Cluster cl;
  cl.node.gpus_per_node = 8;
  cl.num_gpus = 16;
  EXPECT_EQ(torchrun_launch_command(c, cl, "train.py", "/p/fsdp_config.json"),
            "torchrun --nnodes 2 --nproc_per_node 8 train.py --fsdp_config /p/fsdp_config.json");
}

TEST(LaunchCommand, DeepspeedLauncher) {
  TrainConfig c = config(2, 1, 1, 16);
  Cluster cl;
  cl.node.gpus_per_node = 8;
  cl.num_gpus = 16;
  std::string cmd = deepspeed_launch_command(c, cl, "train.py", {"--lr", "1e-4"}, "/tmp/a b.json");
  EXPECT_EQ(cmd,
            "deepspeed --num_nodes 2 --num_gpus 8 train.py --lr 1e-4 --deepspeed "
            "--deepspeed_config '/tmp/a b.json'");
  // An existing --deepspeed PATH is replaced rather than duplicated.
  cmd = deepspeed_launch_command(c, cl, "run_clm.py", {"--deepspeed", "old.json"}, "new.json");
  EXPECT_EQ(cmd, "deepspeed --num_nodes 2 --num_gpus 8 run_clm.py --deepspeed new.json");
}

// A GB200 NVL72 node is one NVLink domain of 72 GPUs but 18 hosts of 4: the launcher
// starts 4 processes on each of 144 / 4 = 36 hosts.
TEST(LaunchCommand, LauncherCountsHostsNotNvlinkDomains) {
  TrainConfig c = config(2, 1, 1, 144);  // dp 144: 144 GPUs
  Cluster cl;
  cl.node.gpus_per_node = 72;
  cl.node.gpus_per_host = 4;
  cl.num_gpus = 144;
  EXPECT_EQ(deepspeed_launch_command(c, cl, "train.py", {}, "d.json"),
            "deepspeed --num_nodes 36 --num_gpus 4 train.py --deepspeed --deepspeed_config d.json");
  EXPECT_EQ(torchrun_launch_command(c, cl, "train.py", "f.json"),
            "torchrun --nnodes 36 --nproc_per_node 4 train.py --fsdp_config f.json");
}

TEST(CommandRewrite, DsConfigPathAndArgMappings) {
  std::vector<std::string> argv = {"python3", "t.py", "--deepspeed", "--deepspeed_config=a.json",
                                   "--per_device_train_batch_size", "8", "--x"};
  EXPECT_EQ(replace_ds_config_path(argv, "b.json"), 1);  // bare --deepspeed is a flag
  EXPECT_EQ(argv[3], "--deepspeed_config=b.json");
  std::map<std::string, std::string> maps = {
      {"train_micro_batch_size_per_gpu", "--per_device_train_batch_size"},
      {"gradient_accumulation_steps", "--gradient_accumulation_steps"},
      {"checkpointing", "--checkpoint-activations"}};
  apply_arg_mappings(argv, maps,
                     {{"train_micro_batch_size_per_gpu", "3"},
                      {"gradient_accumulation_steps", "2"},
                      {"checkpointing", "true"}});
  EXPECT_EQ(shell_join(argv),
            "python3 t.py --deepspeed --deepspeed_config=b.json --per_device_train_batch_size 3 "
            "--x --checkpoint-activations --gradient_accumulation_steps 2");
  apply_arg_mappings(argv, maps, {{"checkpointing", "false"}});
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--checkpoint-activations"), 0);
}

}  // namespace
}  // namespace dsplan
