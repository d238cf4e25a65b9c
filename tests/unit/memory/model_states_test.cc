// Model-state memory against DeepSpeed's own estimators (peers.md sec. 2, DeepSpeed
// @38327e0 stage_1_and_2.py / stage3.py) and Megatron's theoretical_memory_usage
// (peers.md sec. 3). The DeepSpeed formulas are written out here as published and our
// component-wise model must reproduce them when configured the same way (fp16, Adam).
#include "estimator/memory/model_states.h"

#include <gtest/gtest.h>

namespace dsplan {
namespace {

struct DsEstimate {
  double gpu, cpu;
};

// estimate_zero2_model_states_mem_needs(P, gpn, nodes, cpu_offload, 1.5)
DsEstimate ds_zero2(double P, int gpn, int nodes, bool offload) {
  const double n = gpn * nodes;
  if (offload) return {2 * P, P * std::max(4 * n, 16.0) * 1.5};
  return {2 * P + 18 * P / n, 4 * P * gpn * 1.5};
}

// estimate_zero3_model_states_mem_needs(P, largest, gpn, nodes, offload, offload_params,
// zero_init=True, 1.5)
DsEstimate ds_zero3(double P, double largest, int gpn, int nodes, bool off, bool off_params) {
  const double n = gpn * nodes, g = 1.0 / nodes, ll = 4 * largest;
  if (off && off_params) return {ll, 18 * P * g * 1.5};
  if (off) return {ll + 2 * P / n, 16 * P * g * 1.5};
  return {ll + 18 * P / n, 4 * largest * gpn * 1.5};
}

ModelStateInputs fp16_adam(double P, int gpn, int nodes, int stage, Offload off) {
  ModelStateInputs in;
  in.framework = Framework::deepspeed;
  in.precision = Precision::fp16;
  in.optimizer = Optimizer::adam;
  in.zero_stage = stage;
  in.offload = off;
  in.params = P;
  in.dp = gpn * nodes;
  in.gpus_per_node = gpn;
  in.nodes = nodes;
  return in;
}

TEST(ModelStates, MatchesDeepSpeedZero2Estimator) {
  // GPT-2 XL sized (1.56e9) and a 13e9 model, one node of 8 and one of 4 GPUs.
  for (double P : {1.558e9, 13e9}) {
    for (int gpn : {4, 8}) {
      for (bool off : {false, true}) {
        const auto ds = ds_zero2(P, gpn, 1, off);
        const auto m = model_state_memory(fp16_adam(P, gpn, 1, 2, off ? Offload::optimizer : Offload::none));
        // DeepSpeed's estimator is the step-time total: the fp32 gradient partition
        // (step_only) exists then, when the activations are gone.
        EXPECT_NEAR(m.gpu_total() + m.step_only, ds.gpu, 1e-6 * ds.gpu) << P << " " << gpn << " " << off;
        EXPECT_NEAR(m.host_per_node, ds.cpu, 1e-6 * ds.cpu) << P << " " << gpn << " " << off;
      }
    }
  }
  // During backward 2P + (2 + 12)P/N, P = 1e9, N = 8 -> 2e9 + 1.75e9 = 3.75e9 bytes; the
  // step adds the fp32 gradient partition 4P/N = 0.5e9.
  const auto z2 = model_state_memory(fp16_adam(1e9, 8, 1, 2, Offload::none));
  EXPECT_DOUBLE_EQ(z2.gpu_total(), 3.75e9);
  EXPECT_DOUBLE_EQ(z2.step_only, 0.5e9);
}

TEST(ModelStates, MatchesDeepSpeedZero3Estimator) {
  const double P = 6.7e9, largest = 50432.0 * 4096;  // embedding is the largest module
  for (int nodes : {1, 2, 4}) {
    for (int mode = 0; mode < 3; ++mode) {
      const bool off = mode >= 1, off_params = mode == 2;
      auto in = fp16_adam(P, 8, nodes, 3,
                          off_params ? Offload::all : off ? Offload::optimizer : Offload::none);
      in.largest_module = largest;
      const auto ds = ds_zero3(P, largest, 8, nodes, off, off_params);
      const auto m = model_state_memory(in);
      EXPECT_NEAR(m.gpu_total(), ds.gpu, 1e-6 * ds.gpu) << nodes << " " << mode;
      EXPECT_NEAR(m.host_per_node, ds.cpu, 1e-6 * ds.cpu) << nodes << " " << mode;
    }
  }
}

TEST(ModelStates, MegatronEighteenBytesOrDistributedOptimizer) {
  ModelStateInputs in;
  in.framework = Framework::megatron;
  in.precision = Precision::bf16;
  in.params = 1e9;
  in.dp = 8;
  // 2 (bf16 params) + 4 (fp32 main grads) + 4 (master) + 8 (Adam) = 18 B/param.
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 18e9);
  in.zero_stage = 1;  // --use-distributed-optimizer: 6 + 12/dp = 6 + 1.5 = 7.5 B/param
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 7.5e9);
}

// Megatron-FSDP (stage 3, optim_grads_params): 2 + 4 + 12 = 18 B/param all over dp 8 =
// 2.25e9 B for 1e9 parameters; gathered, a 2e8-parameter layer twice in bf16 (the one
// computing and the prefetched one) and its fp32 gradients: (2 + 2 + 4) x 2e8 = 1.6e9 B.
// With a bf16 gradient buffer (grad_reduce_in_fp32 off): (2 + 2 + 12) / 8 = 2e9 and
// (2 + 2 + 2) x 2e8 = 1.2e9.
TEST(ModelStates, MegatronFsdpShardsEverything) {
  ModelStateInputs in;
  in.framework = Framework::megatron;
  in.precision = Precision::bf16;
  in.params = 1e9;
  in.dp = 8;
  in.zero_stage = 3;
  in.fsdp_unit = 2e8;
  ModelStateMemory m = model_state_memory(in);
  EXPECT_DOUBLE_EQ(m.params + m.grads + m.optimizer, 2.25e9);
  EXPECT_DOUBLE_EQ(m.gathered, 1.6e9);
  in.megatron_fp32_grads = false;
  m = model_state_memory(in);
  EXPECT_DOUBLE_EQ(m.params + m.grads + m.optimizer, 2e9);
  EXPECT_DOUBLE_EQ(m.gathered, 1.2e9);
}

TEST(ModelStates, OptimizersAndPrecisions) {
  ModelStateInputs in = fp16_adam(1e9, 1, 1, 0, Offload::none);
  // DeepSpeed ZeRO-0 fp16: 2 + 2 + 4 + 8 = 16 B/param; SGD momentum: 2 + 2 + 4 + 4 = 12.
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 16e9);
  in.optimizer = Optimizer::sgd;
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 12e9);
  // 8-bit Adam: 2 + 2 + 4 + (2 + 8/2048) = 10.00390625 B/param.
  in.optimizer = Optimizer::adam_8bit;
  EXPECT_NEAR(model_state_memory(in).gpu_total(), 10.00390625e9, 1);
  // Adafactor with a factored moment of 0.01 B/param: 2 + 2 + 4 + 0.01.
  in.optimizer = Optimizer::adafactor;
  in.adafactor_bytes_per_param = 0.01;
  EXPECT_NEAR(model_state_memory(in).gpu_total(), 8.01e9, 1);
  // bf16 ZeRO-0 as BF16_Optimizer (DeepSpeed before 0.17.6, or a pipeline) accumulates
  // fp32 grads: 2 + (2 + 4) + 4 + 8 = 20.
  in.optimizer = Optimizer::adam;
  in.precision = Precision::bf16;
  in.bf16_optimizer = true;
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 20e9);
  // With 8 data-parallel ranks BF16_Optimizer partitions the fp32 master and Adam states
  // like ZeRO-1: 2 + (2 + 4) + 12/8 = 9.5 B/param.
  in.dp = 8;
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 9.5e9);
  // Since 0.17.6, outside a pipeline: fp16's layout, replicated, 2 + 2 + 4 + 8 = 16 at any dp.
  in.bf16_optimizer = false;
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 16e9);
  in.dp = 1;
  // fp32 DeepSpeed ZeRO-0: 4 + 4 + 8 = 16 (no master copy).
  in.precision = Precision::fp32;
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 16e9);
}

TEST(ModelStates, ZeroStagesShrinkMonotonically) {
  double prev = 1e300;
  for (int stage = 0; stage <= 3; ++stage) {
    const double gpu = model_state_memory(fp16_adam(1e9, 8, 1, stage, Offload::none)).gpu_total();
    EXPECT_LT(gpu, prev) << "stage " << stage;
    prev = gpu;
  }
  // ZeRO-1, N = 8: 2 (params) + 2 (fp16 grads) + 2/8 (contiguous partition) + 12/8
  // (master + Adam) = 5.75 B/param; the fp32 gradient partition 4/8 only in the step.
  const auto z1 = model_state_memory(fp16_adam(1e9, 8, 1, 1, Offload::none));
  EXPECT_DOUBLE_EQ(z1.gpu_total(), 5.75e9);
  EXPECT_DOUBLE_EQ(z1.step_only, 0.5e9);
}

TEST(ModelStates, DdpAndFsdp) {
  ModelStateInputs in;
  in.framework = Framework::ddp;
  in.precision = Precision::fp16;
  in.params = 1e9;
  in.dp = 4;
  // torch.amp: 4 (fp32 params) + 2 (16-bit weight casts) + 4 (grads) + 8 (Adam) = 18.
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 18e9);
  // One rank under PyTorch >= 2.0's zero_grad(set_to_none=True): the 4 B/param gradients
  // exist only from backward to the step (step_only), not beside the activations. The
  // foreach Adam step adds its 4 B/param sqrt list, and the 2 B/param casts are gone by
  // then: step_only = 4 + 4 - 2 = 6 B/param, so the step holds 18 - 2 + 4 + 4 = 20...
  in.dp = 1;
  in.grads_set_to_none = true;
  EXPECT_DOUBLE_EQ(model_state_memory(in).grads, 0.0);
  EXPECT_DOUBLE_EQ(model_state_memory(in).step_only, 6e9);
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total() + model_state_memory(in).step_only, 20e9);
  // ...but accumulation keeps them across micro-batches, and PyTorch 1.x zeroed in place.
  in.grad_accum = 2;
  EXPECT_DOUBLE_EQ(model_state_memory(in).grads, 4e9);
  in.grad_accum = 1;
  in.grads_set_to_none = false;
  EXPECT_DOUBLE_EQ(model_state_memory(in).grads, 4e9);
  // Full recomputation keeps the 16-bit casts of none but the layer being recomputed (and
  // the rest of the model, e.g. the LM head): with 1e8 such parameters,
  // 4 + 0.2 (casts: 2 B x 1e8 / 1e9) + 4 + 8 = 16.2 B/param.
  in.autocast_cast_params = 1e8;
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 16.2e9);
  in.autocast_cast_params = -1;
  // ZeroRedundancyOptimizer (stage 1) shards Adam's 8 B/param over the 4 ranks, whole
  // tensors each: 4 + 2 + 4 + 8/4 = 12 B/param. When the largest tensor (4e8) outweighs
  // P/4 = 2.5e8 its owner holds all of it: 10e9 + 8 x 4e8 = 13.2e9.
  in.dp = 4;
  in.zero_stage = 1;
  in.largest_module = 1e8;
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 12e9);
  in.largest_module = 4e8;
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 13.2e9);
  in.largest_module = 0;
  in.zero_stage = 0;
  in.framework = Framework::fsdp;
  in.zero_stage = 3;
  in.fsdp_unit = 1e8;
  // FULL_SHARD, N = 4: (4 + 4 + 8)/4 = 4 B/param + 3 x 2 B x 1e8 unit = 4.6e9.
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 4.6e9);
  // FSDP2 copies each all-gather out of its output buffer: one more 2 B x 1e8 unit, 4.8e9.
  in.fsdp_version = 2;
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 4.8e9);
  // Unsharded (one rank) it gathers nothing.
  in.dp = 1;
  in.fsdp_version = 1;
  const double one_rank = model_state_memory(in).gpu_total();
  in.fsdp_version = 2;
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), one_rank);
}

// DDP over a model cast to 16 bits (apex AMP O2): 2 (fp16 params) + 2 (fp16 grads) + 4 (fp32
// master) + 8 (Adam) = 16 B/param, no autocast casts; ZeroRedundancyOptimizer shards master
// and moments: 2 + 2 + 12/4 = 7 B/param. fp32 runs ignore the flag (16 B/param either way).
TEST(ModelStates, DdpOverASixteenBitModel) {
  ModelStateInputs in;
  in.framework = Framework::ddp;
  in.precision = Precision::fp16;
  in.params = 1e9;
  in.dp = 4;
  in.amp_o2 = true;
  const ModelStateMemory m = model_state_memory(in);
  EXPECT_DOUBLE_EQ(m.params, 2e9);
  EXPECT_DOUBLE_EQ(m.grads, 2e9);
  EXPECT_DOUBLE_EQ(m.optimizer, 12e9);
  EXPECT_DOUBLE_EQ(m.gpu_total(), 16e9);
  in.zero_stage = 1;
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 7e9);
  in.zero_stage = 0;
  in.precision = Precision::fp32;
  const double fp32_o2 = model_state_memory(in).gpu_total();
  in.amp_o2 = false;
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), fp32_o2);
  EXPECT_DOUBLE_EQ(fp32_o2, 16e9);
}

// A pure 16-bit model (model.to(bfloat16) with torch.optim): 2 (bf16 params) + 2 (grads) +
// 4 (Adam's two moments in bf16) = 8 B/param under DDP, no master; FSDP FULL_SHARD over N = 4
// shards all of it, 8/4 = 2 B/param, plus its gathered units (3 x 2 B x 1e8 = 0.6e9). 8-bit
// Adam keeps its own state size (2 + 2 x 4 / 2048 B/param).
TEST(ModelStates, PureSixteenBitModelHasNoMaster) {
  ModelStateInputs in;
  in.framework = Framework::ddp;
  in.precision = Precision::bf16;
  in.params = 1e9;
  in.dp = 4;
  in.pure16 = true;
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 8e9);
  in.optimizer = Optimizer::adam_8bit;
  EXPECT_DOUBLE_EQ(model_state_memory(in).optimizer, (2 + 2 * 4.0 / 2048) * 1e9);
  in.optimizer = Optimizer::adam;
  in.framework = Framework::fsdp;
  in.zero_stage = 3;
  in.fsdp_unit = 1e8;
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 2e9 + 0.6e9);
  in.pure16 = false;  // FSDP's fp32 shards and states: (4 + 4 + 8) / 4 = 4 B/param
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 4e9 + 0.6e9);
}

// torch.optim's foreach Adam step (PyTorch >= 2.0 on CUDA): sqrt(exp_avg_sq) of the
// parameters this rank updates, a new fp32 list (torch._foreach_sqrt), beside whatever the
// states hold at the step; the autocast casts died in backward. Session 34's StarCoder2-3B
// run peaked there (20 B/param, 56.5 GiB for 3.03e9 parameters).
TEST(ModelStates, ForeachAdamStepHoldsASqrtList) {
  ModelStateInputs in;
  in.framework = Framework::ddp;
  in.precision = Precision::bf16;
  in.params = 1e9;
  in.grads_set_to_none = true;
  in.dp = 4;
  // Four ranks keep their gradients (DDP's buckets): states 4 + 2 + 4 + 8 = 18 B/param,
  // and the step adds 4 (sqrt list) - 2 (casts) = 2.
  EXPECT_DOUBLE_EQ(model_state_memory(in).gpu_total(), 18e9);
  EXPECT_DOUBLE_EQ(model_state_memory(in).step_only, 2e9);
  // ZeroRedundancyOptimizer: each rank updates P/4 = 2.5e8 parameters: 4 x 2.5e8 - 2e9 < 0,
  // nothing beyond the states.
  in.zero_stage = 1;
  EXPECT_DOUBLE_EQ(model_state_memory(in).step_only, 0.0);
  // SGD's foreach step makes no such list (momentum updated in place); one rank: the
  // gradients less the casts, 4 - 2 = 2 B/param.
  in.zero_stage = 0;
  in.dp = 1;
  in.optimizer = Optimizer::sgd;
  EXPECT_DOUBLE_EQ(model_state_memory(in).step_only, 2e9);
  // PyTorch 1.x's per-tensor loop (grads zeroed in place): none.
  in.optimizer = Optimizer::adam;
  in.grads_set_to_none = false;
  EXPECT_DOUBLE_EQ(model_state_memory(in).step_only, 0.0);
}

}  // namespace
}  // namespace dsplan
