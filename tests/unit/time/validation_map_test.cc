// How `dsplan validate` reads a published row's text into a pinned request
// (validation/validation_map.cc): the engine settings named in parallel.other and the
// row's offload flag, and the words that must not trigger them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "validation/validation_rows.h"

namespace dsplan::test {
namespace {

using nlohmann::json;

// An 8-GPU A100 row of a small GPT with DeepSpeed, to be varied per test.
json ds_row(int zero, const std::string& other) {
  return json{{"id", "t"},
              {"source", "a DeepSpeed test row"},
              {"model", {{"name", "GPT test"}, {"layers", 24}, {"hidden", 2048}, {"heads", 16},
                         {"seq_len", 2048}, {"vocab", 50257}}},
              {"hardware", {{"gpu", "A100 SXM4 80GB"}, {"num_gpus", 8}, {"nodes", 1}}},
              {"parallel", {{"tp", 1}, {"pp", 1}, {"zero_stage", zero}, {"offload", false}, {"micro_batch", 4},
                            {"global_batch", 32}, {"precision", "bf16"}, {"other", other}}},
              {"measured", {{"iteration_time_ms", 1000}}}};
}

PlanRequest request_of(const json& row) {
  std::vector<std::string> notes;
  auto r = validation::rows::row_request(row, notes);
  EXPECT_TRUE(r) << "row did not map";
  return r ? *r : PlanRequest{};
}

TEST(ValidationMap, OssIsAWordNotASubstring) {
  // "loss scaling" and "cross-node" contain "oss"; only fairscale's OSS means ZeRO-1.
  EXPECT_EQ(request_of(ds_row(0, "dynamic loss scaling, cross-node reduction")).space.zero[0], 0);
  EXPECT_EQ(request_of(ds_row(0, "fairscale OSS optimizer state sharding")).space.zero[0], 1);
  EXPECT_EQ(request_of(ds_row(0, "fairscale OSS + ShardedDDP")).space.zero[0], 2);
}

TEST(ValidationMap, NemoRunsMegatronCoresFusedCrossEntropy) {
  // NeMo's recipes turn on Megatron-Core's cross_entropy_loss_fusion; Megatron-LM's flag is
  // off by default, and only Megatron rows carry the setting.
  json row = ds_row(1, "distributed optimizer");
  row["source"] = "NVIDIA/dgxc-benchmarking: NeMo (Megatron-Core)";
  EXPECT_EQ(request_of(row).space.run.cross_entropy, CrossEntropy::jit_fused);
  row["source"] = "NVIDIA/Megatron-LM README (Megatron-Core r0.8.0)";
  EXPECT_NE(request_of(row).space.run.cross_entropy, CrossEntropy::jit_fused);
  row["parallel"]["other"] = "--cross-entropy-loss-fusion";
  EXPECT_EQ(request_of(row).space.run.cross_entropy, CrossEntropy::jit_fused);
  row["source"] = "a DeepSpeed test row";
  EXPECT_NE(request_of(row).space.run.cross_entropy, CrossEntropy::jit_fused);
}

TEST(ValidationMap, ZeroRedundancyOptimizerIsDdpStageOne) {
  // A row that names torch's ZeroRedundancyOptimizer without DeepSpeed is DDP at stage 1,
  // whatever its zero_stage field says; with DeepSpeed named it is DeepSpeed's ZeRO.
  const PlanRequest r =
      request_of(ds_row(0, "Lightning DDP (no DeepSpeed), ZeroRedundancyOptimizer over AdamW"));
  EXPECT_EQ(r.space.run.framework, Framework::ddp);
  EXPECT_EQ(r.space.zero[0], 1);
  EXPECT_EQ(request_of(ds_row(1, "ZeRO stage 1")).space.run.framework, Framework::deepspeed);
}

TEST(ValidationMap, OffloadFlagAndNamedParameterOffload) {
  json row = ds_row(3, "ZeRO-3 with CPUAdam");
  EXPECT_EQ(request_of(row).space.offload[0], Offload::none);
  row["parallel"]["offload"] = true;
  EXPECT_EQ(request_of(row).space.offload[0], Offload::optimizer);
  row["parallel"]["other"] = "ZeRO-3, offload_param device cpu, offload_optimizer device cpu";
  EXPECT_EQ(request_of(row).space.offload[0], Offload::all);
  // Parameter offload is a stage-3 feature: a stage-2 row offloads the optimizer only.
  row["parallel"]["zero_stage"] = 2;
  EXPECT_EQ(request_of(row).space.offload[0], Offload::optimizer);
}

// A DeepSpeed row whose engine ran the client's torch optimizer (its log: "Using client
// Optimizer as basic optimizer") is priced with that optimizer, which ZeRO-Offload runs on the
// host; DeepSpeed's own optimizer otherwise (-1: fused, or CPU Adam under offload).
TEST(ValidationMap, ClientOptimizerNamed) {
  json row = ds_row(2, "ZeRO-2 with cpu_offload, DeepSpeedCPUAdam");
  EXPECT_EQ(request_of(row).space.run.fused_optimizer, -1);
  row["parallel"]["other"] = "ZeRO-2 with cpu_offload; client optimizer torch.optim.AdamW on the CPU";
  EXPECT_EQ(request_of(row).space.run.fused_optimizer, 0);
}

// ZeRO's buckets a DeepSpeed row names by their ds_config keys replace DeepSpeed's defaults
// (reduce and all-gather 5e8, prefetch 5e7, live parameters 1e9); other wordings do not.
TEST(ValidationMap, ZeroBucketsNamed) {
  json row = ds_row(3,
                    "ZeRO-3: reduce_bucket_size 9e7, stage3_prefetch_bucket_size: 2.5e7, "
                    "stage3_max_live_parameters 3e9, allgather_bucket_size=200000000");
  const ZeroKnobs z = request_of(row).space.run.zero;
  EXPECT_DOUBLE_EQ(z.reduce_bucket_elems, 9e7);
  EXPECT_DOUBLE_EQ(z.prefetch_bucket_elems, 2.5e7);
  EXPECT_DOUBLE_EQ(z.max_live_params, 3e9);
  EXPECT_DOUBLE_EQ(z.allgather_bucket_elems, 2e8);
  const ZeroKnobs d = request_of(ds_row(3, "ZeRO stage 3 with 1.26e9 buckets")).space.run.zero;
  EXPECT_DOUBLE_EQ(d.reduce_bucket_elems, ZeroKnobs{}.reduce_bucket_elems);
}

// FlashAttention-3 named on Hopper selects its kernel; on an A100 (where it does not run) the
// row keeps the default.
TEST(ValidationMap, FlashAttention3NamedOnHopper) {
  json row = ds_row(3, "ZeRO-3, FlashAttention-3 (flash_attn_interface)");
  row["parallel"]["flash_attention"] = true;
  EXPECT_EQ(request_of(row).space.run.attention, AttentionKernel::auto_);
  row["hardware"]["gpu"] = "H100 SXM5 80GB";
  EXPECT_EQ(request_of(row).space.run.attention, AttentionKernel::fa3);
}

TEST(ValidationMap, DeepSpeedOverlapCommNamed) {
  EXPECT_EQ(request_of(ds_row(1, "ZeRO stage 1")).space.run.zero.overlap_comm, -1);
  EXPECT_EQ(request_of(ds_row(1, "ZeRO stage 1 (overlap_comm true, reduce_scatter)")).space.run.zero.overlap_comm, 1);
  EXPECT_EQ(request_of(ds_row(1, "overlap_comm: false")).space.run.zero.overlap_comm, -1);
}

TEST(ValidationMap, ComposerRowsPriceTheirTrainMetrics) {
  json row = ds_row(3, "PyTorch FSDP FULL_SHARD via Composer");
  EXPECT_EQ(request_of(row).space.run.logit_metrics, 2);
  row["parallel"]["other"] = "PyTorch FSDP FULL_SHARD";
  EXPECT_EQ(request_of(row).space.run.logit_metrics, 0);
  row["source"] = "mosaicml/llm-foundry benchmarks";
  EXPECT_EQ(request_of(row).space.run.logit_metrics, 2);
}

// The 2021 DeepSpeed autotuning examples time steps 3-5 with DeepSpeed < 0.8's loss scale
// of 2^32, so fp16 autotuner-metric rows are overflow steps; their end-to-end rows (200
// steps), fp32 rows and other sources are not.
TEST(ValidationMap, AutotunerFp16MetricRowsAreOverflowSteps) {
  json row = ds_row(1, "run_clm wikitext-2");
  row["source"] = "microsoft/DeepSpeedExamples autotuning/hf (transformers 4.12, datasets 1.11)";
  row["parallel"]["precision"] = "fp16";
  row["measured"] = {{"ds_autotuner_metric_samples_per_s", 100.0}};
  EXPECT_TRUE(request_of(row).space.run.overflow_step);
  json e2e = row;
  e2e["measured"] = {{"samples_per_s_end_to_end", 90.0}};
  EXPECT_FALSE(request_of(e2e).space.run.overflow_step);
  json fp32 = row;
  fp32["parallel"]["precision"] = "fp32";
  EXPECT_FALSE(request_of(fp32).space.run.overflow_step);
  json later = row;
  later["source"] = "a DeepSpeed 0.14 autotuning run";
  EXPECT_FALSE(request_of(later).space.run.overflow_step);
}

TEST(ValidationMap, SixteenBitMegatronGradientsNamed) {
  json row = ds_row(1, "distributed optimizer; grad_sync_dtype bf16 (the recipe yaml)");
  row["source"] = "NVIDIA NeMo (Megatron-Core) recipe";
  EXPECT_FALSE(request_of(row).space.run.megatron_fp32_grads);
  row["parallel"]["other"] = "Megatron-Core DDP; grad_reduce_in_fp32=False";
  EXPECT_FALSE(request_of(row).space.run.megatron_fp32_grads);
  row["parallel"]["other"] = "Megatron-Core DDP; grad_reduce_in_fp32=True";
  EXPECT_TRUE(request_of(row).space.run.megatron_fp32_grads);
  // Only Megatron has the setting: a DeepSpeed row naming it keeps the default.
  json ds = ds_row(1, "grad_reduce_in_fp32=False");
  EXPECT_TRUE(request_of(ds).space.run.megatron_fp32_grads);
}

TEST(ValidationMap, FsdpHybridShardingNamed) {
  json row = ds_row(3, "PyTorch FSDP HYBRID_SHARD, limit_all_gathers");
  EXPECT_TRUE(request_of(row).space.run.fsdp_hybrid);
  row["parallel"]["other"] = "PyTorch FSDP FULL_SHARD";
  EXPECT_FALSE(request_of(row).space.run.fsdp_hybrid);
  // Only FSDP has it: a DeepSpeed row naming HSDP keeps ZeRO's full sharding.
  EXPECT_FALSE(request_of(ds_row(3, "ZeRO-3, HSDP-like")).space.run.fsdp_hybrid);
}

TEST(ValidationMap, Fsdp2Named) {
  // torchtitan's rows name FSDP2 / fully_shard; IBM's name FSDP1; an unnamed FSDP is FSDP1.
  json row = ds_row(3, "PyTorch FSDP2 (torchtitan fully_shard per TransformerBlock)");
  EXPECT_EQ(request_of(row).space.run.fsdp_version, 2);
  row["parallel"]["other"] = "PyTorch FSDP, fully_shard per block, MixedPrecisionPolicy";
  EXPECT_EQ(request_of(row).space.run.fsdp_version, 2);
  row["parallel"]["other"] = "PyTorch FSDP (FSDP1) FULL_SHARD, limit_all_gathers True";
  EXPECT_EQ(request_of(row).space.run.fsdp_version, 1);
  row["parallel"]["other"] = "PyTorch FSDP FULL_SHARD";
  EXPECT_EQ(request_of(row).space.run.fsdp_version, 1);
  // Only FSDP has it.
  EXPECT_EQ(request_of(ds_row(3, "ZeRO-3, sharding like fully_shard")).space.run.fsdp_version, 1);
}

TEST(ValidationMap, FsdpFp32ReductionNamed) {
  // torchtitan's MixedPrecisionPolicy and Composer's mixed_precision DEFAULT reduce in fp32;
  // IBM's bfSixteen policy and an unnamed policy reduce in the compute dtype.
  json row = ds_row(3, "PyTorch FSDP2, MixedPrecisionPolicy param bf16 / reduce fp32");
  EXPECT_TRUE(request_of(row).space.run.fsdp_reduce_fp32);
  row["parallel"]["other"] = "PyTorch FSDP FULL_SHARD via Composer, mixed_precision DEFAULT";
  EXPECT_TRUE(request_of(row).space.run.fsdp_reduce_fp32);
  row["parallel"]["other"] = "PyTorch FSDP, MixedPrecision(reduce_dtype=float32)";
  EXPECT_TRUE(request_of(row).space.run.fsdp_reduce_fp32);
  row["parallel"]["other"] = "PyTorch FSDP (FSDP1) FULL_SHARD, bf16 MixedPrecision (bfSixteen)";
  EXPECT_FALSE(request_of(row).space.run.fsdp_reduce_fp32);
  // Only FSDP has it.
  EXPECT_FALSE(request_of(ds_row(2, "ZeRO-2, reduce fp32")).space.run.fsdp_reduce_fp32);
}

// A GPU variant named by its own figures: Meta's Grand Teton H100 (torchtitan's H100 tables)
// has 96 GB of HBM2e at 2.4 TB/s, not the H100 SXM5's 80 GB at 3.35 TB/s. An ordinary
// H100 row keeps the dgx-h100 preset's GPU.
TEST(ValidationMap, MetaH100Variant) {
  json row = ds_row(3, "PyTorch FSDP2");
  row["hardware"]["gpu"] = "H100 SXM 96GB HBM2e (500 W power limit, Meta Grand Teton)";
  const PlanRequest meta = request_of(row);
  EXPECT_DOUBLE_EQ(meta.cluster.node.gpu.hbm_bw.v, 2400e9);
  EXPECT_DOUBLE_EQ(meta.cluster.node.gpu.memory.v, 96e9);
  row["hardware"]["gpu"] = "H100 SXM5 80GB";
  const PlanRequest plain = request_of(row);
  EXPECT_DOUBLE_EQ(plain.cluster.node.gpu.hbm_bw.v, 3350e9);
  EXPECT_EQ(plain.cluster.node.gpu.name, meta.cluster.node.gpu.name);  // same SMs and clocks
}

// BigScience's 104B tune-up (validation/evidence/bigscience-104b-v100.json): Jean Zay's
// V100 32GB nodes hold 4 GPUs on NVLink, and --use-bnb-optimizer is bitsandbytes' 8-bit
// Adam. Without those words a row keeps the defaults.
TEST(ValidationMap, JeanZayV100AndBnbOptimizer) {
  json row = ds_row(1, "Megatron-DeepSpeed; --use-bnb-optimizer (bitsandbytes 8-bit Adam)");
  row["hardware"] = {
      {"gpu", "V100 SXM2 32GB"},
      {"num_gpus", 128},
      {"nodes", 32},
      {"interconnect", "Jean Zay gpu_p1: 4 V100 per node on NVLink; 4x Omni-Path 100 Gb/s per node"}};
  row["parallel"]["precision"] = "fp16 mixed";
  const PlanRequest r = request_of(row);
  EXPECT_EQ(r.cluster.node.gpus_per_node, 4);
  EXPECT_NEAR(r.cluster.node.gpu.memory.v / (1024.0 * 1024 * 1024), 31.7, 0.1);
  EXPECT_EQ(r.cluster.node.gpu.arch, GpuArch::volta);
  EXPECT_EQ(r.space.run.optimizer, Optimizer::adam_8bit);
  row["parallel"]["other"] = "Megatron-DeepSpeed";
  EXPECT_EQ(request_of(row).space.run.optimizer, Optimizer::adam);
  // Without the words "Jean Zay" the row's own counts say the same: 128 GPUs on 32 nodes.
  row["hardware"]["interconnect"] = "4x Omni-Path 100 Gb/s per node";
  EXPECT_EQ(request_of(row).cluster.node.gpus_per_node, 4);
  EXPECT_EQ(request_of(row).cluster.node.nics_per_node, 4);
  // Counts no network has are not read (and do not throw, as a 14-digit count once did).
  EXPECT_EQ(validation::rows::stated_nics("8x200Gb/s HDR IB per node"), std::make_pair(8, 200.0));
  EXPECT_FALSE(validation::rows::stated_nics("99999999999999x HDR 200 Gb/s per node").has_value());
  EXPECT_FALSE(validation::rows::stated_nics("8x HDR " + std::string(400, '9') + " Gb/s").has_value());
}

// The DeepSpeed a row ran, from the release its text names: the month of the release's tag
// (v0.6.0, 2022-03: ZeRO-3's fetches stop blocking), the 2021 autotuning tables' v0.5.8 by
// their transformers 4.12, else 2025-01; a version too long to be one is not read.
TEST(ValidationMap, DeepSpeedReleaseFromTheRowsText) {
  json row = ds_row(3, "DeepSpeed 0.11.1 ZeRO stage 3");
  TrainConfig run = request_of(row).space.run;
  EXPECT_EQ(run.deepspeed_release, 202310);
  run.zero_stage = 3;
  EXPECT_FALSE(run.deepspeed_zero3_sync_fetch());
  row["parallel"]["other"] = "deepspeed==0.5.7, ZeRO stage 3";
  run = request_of(row).space.run;
  EXPECT_EQ(run.deepspeed_release, 202108);
  run.zero_stage = 3;
  EXPECT_TRUE(run.deepspeed_zero3_sync_fetch());
  row["parallel"]["other"] = "DeepSpeed 0.17.6";
  EXPECT_EQ(request_of(row).space.run.deepspeed_release, 202509);
  row["parallel"]["other"] = "DeepSpeed 0.17.5";
  EXPECT_EQ(request_of(row).space.run.deepspeed_release, 202506);
  row["parallel"]["other"] = "DeepSpeed 123456.1.1";
  EXPECT_EQ(request_of(row).space.run.deepspeed_release, 202501);
  row["parallel"]["other"] = "ZeRO stage 3";
  row["source"] = "microsoft/DeepSpeedExamples autotuning/hf/README.md (transformers 4.12, datasets 1.11)";
  EXPECT_EQ(request_of(row).space.run.deepspeed_release, 202111);
}

// A shape-only row is a Megatron GPT (LayerNorm) unless its model says otherwise: Llama's
// blocks use RMSNorm and SwiGLU, which outside Megatron run as eager chains of kernels. An
// explicit "norm" key wins over the name.
TEST(ValidationMap, LlamaRowsTakeRmsNorm) {
  json row = ds_row(3, "PyTorch FSDP FULL_SHARD");
  EXPECT_EQ(request_of(row).model.norm, NormKind::layernorm);
  EXPECT_EQ(request_of(row).model.activation, Activation::gelu);
  row["model"]["name"] = "Llama 2 7B (IBM LlamaT, FMS llama 7b)";
  row["model"]["gated_mlp"] = true;
  EXPECT_EQ(request_of(row).model.norm, NormKind::rmsnorm);
  EXPECT_EQ(request_of(row).model.activation, Activation::silu);
  row["model"]["norm"] = "layernorm";
  EXPECT_EQ(request_of(row).model.norm, NormKind::layernorm);
  row["model"]["name"] = "GPT test";
  row["model"]["norm"] = "RMSNorm";
  EXPECT_EQ(request_of(row).model.norm, NormKind::rmsnorm);
  row["model"]["gated_mlp"] = false;  // an ungated MLP keeps its activation
  EXPECT_EQ(request_of(row).model.activation, Activation::gelu);
}

// Positions as the row names them: BigScience's ALiBi has no position table, NeoX's and
// Llama's rotary neither; without a name a GPT keeps its learned table.
TEST(ValidationMap, PositionSchemeNamed) {
  json row = ds_row(1, "Megatron-DeepSpeed");
  EXPECT_EQ(request_of(row).model.position, PositionKind::learned);
  row["model"]["position"] = "alibi";
  EXPECT_EQ(request_of(row).model.position, PositionKind::alibi);
  row["model"]["position"] = "rotary";
  EXPECT_EQ(request_of(row).model.position, PositionKind::rotary);
}

// FP8 rows: "fp8" in the precision is bf16 with FP8 linears, with per-tensor current scaling
// where parallel.other names it. NVTE_FUSED_ATTN=0 in a row's text is Transformer Engine
// told not to use cuDNN's attention: FlashAttention-2's rate, not the Hopper auto choice.
TEST(ValidationMap, Fp8AndTransformerEngineAttentionNamed) {
  json row = ds_row(1, "distributed optimizer");
  row["source"] = "NVIDIA/dgxc-benchmarking: NeMo (Megatron-Core)";
  row["parallel"]["precision"] = "fp8";
  const TrainConfig delayed = request_of(row).space.run;
  EXPECT_TRUE(delayed.fp8);
  EXPECT_EQ(delayed.precision, Precision::bf16);
  EXPECT_EQ(delayed.fp8_recipe, Fp8Recipe::delayed);
  EXPECT_EQ(delayed.attention, AttentionKernel::auto_);
  row["parallel"]["other"] = "FP8 per-tensor current scaling; NVTE_FUSED_ATTN=0";
  const TrainConfig current = request_of(row).space.run;
  EXPECT_EQ(current.fp8_recipe, Fp8Recipe::tensorwise);
  EXPECT_EQ(current.attention, AttentionKernel::fa2);
  row["parallel"]["precision"] = "bf16";  // "current scaling" means nothing without FP8
  EXPECT_FALSE(request_of(row).space.run.fp8);
  row["parallel"]["other"] = "cuDNN fused attention (NVTE_FUSED_ATTN=1)";
  EXPECT_EQ(request_of(row).space.run.attention, AttentionKernel::auto_);
  // MXFP8 named in the settings, or as the precision ("MXFP8", Megatron-Bridge's "FP8-MX").
  row["parallel"]["precision"] = "fp8";
  row["parallel"]["other"] = "FP8: Transformer Engine MXFP8 block scaling (mxfp8, 1x32 blocks)";
  EXPECT_EQ(request_of(row).space.run.fp8_recipe, Fp8Recipe::mxfp8);
  row["parallel"]["other"] = "";
  row["parallel"]["precision"] = "FP8-MX";
  EXPECT_TRUE(request_of(row).space.run.fp8);
  EXPECT_EQ(request_of(row).space.run.fp8_recipe, Fp8Recipe::mxfp8);
  // NVFP4 ("nvfp4", Megatron-Bridge's NVFP4 rows) takes the FP8 linears' place, whatever
  // FP8 words the settings also carry.
  row["parallel"]["precision"] = "nvfp4";
  row["parallel"]["other"] =
      "as published: bf16_with_nvfp4_mixed (fp8 None, fp4 e2m1); the MXFP8 sibling ...";
  const TrainConfig fp4 = request_of(row).space.run;
  EXPECT_TRUE(fp4.nvfp4());
  EXPECT_EQ(fp4.precision, Precision::bf16);
  EXPECT_EQ(fp4.linear_precision(), Precision::nvfp4);
  // fp32 whose matmuls the row says ran on TF32 tensor cores; plain fp32 does not.
  row["parallel"]["other"] = "";
  row["parallel"]["precision"] = "fp32 (TF32 tensor-core matmuls, theoryflops 495T)";
  EXPECT_EQ(request_of(row).space.run.gemm_precision(), Precision::tf32);
  row["parallel"]["precision"] = "fp32";
  EXPECT_EQ(request_of(row).space.run.gemm_precision(), Precision::fp32);
  // apex AMP O2 (or a model.half() with fp32 master weights): a 16-bit model, no autocast.
  // "ZeRO2" is not "O2".
  row["parallel"]["precision"] = "fp16 mixed";
  row["parallel"]["other"] = "PyTorch DDP; apex AMP opt_level O2, dynamic loss scaling";
  EXPECT_TRUE(request_of(row).space.run.ddp_amp_o2);
  row["parallel"]["other"] = "model.half() with fp32 master weights in FusedLAMB";
  EXPECT_TRUE(request_of(row).space.run.ddp_amp_o2);
  row["parallel"]["other"] = "DeepSpeed ZeRO2, torch.amp";
  EXPECT_FALSE(request_of(row).space.run.ddp_amp_o2);
  EXPECT_FALSE(request_of(row).space.run.pure16);
  // A pure 16-bit model: no fp32 master weights anywhere.
  row["parallel"]["precision"] = "bf16 (pure bf16 model: model.to(torch.bfloat16), no fp32 master weights)";
  row["parallel"]["other"] = "torch DDP";
  EXPECT_TRUE(request_of(row).space.run.pure16);
}

// A hybrid Mamba/attention model (Nemotron 3 Super, NemotronH) is refused with its reason;
// a plain transformer with the same keys otherwise is not.
TEST(ValidationMap, HybridMambaModelsAreNotModelled) {
  json m = {{"name", "Nemotron 3 Super 120B-A12B"}, {"layers", 88}, {"hidden", 4096}};
  EXPECT_FALSE(validation::rows::unsupported_architecture(m));
  m["hybrid_layer_pattern"] = "MEMEMEM*E";
  const auto why = validation::rows::unsupported_architecture(m);
  ASSERT_TRUE(why);
  EXPECT_NE(why->message.find("hybrid Mamba/attention models are not modelled"), std::string::npos);
  EXPECT_TRUE(validation::rows::unsupported_architecture(json{{"name", "Jamba 1.5 Mini"}}));
}

}  // namespace
}  // namespace dsplan::test
