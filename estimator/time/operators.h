// Compute cost of one micro-batch on one tensor-parallel rank, decomposed into kernels:
// per transformer layer (norms, QKV, attention core, output projection, dropout and
// residual adds, MLP GEMMs and activation), the embedding (first pipeline stage) and the
// head (final norm, vocabulary-parallel logits and cross-entropy; last stage). Forward,
// backward (data- and weight-gradient GEMMs) and recompute are priced separately. GEMMs
// use gemm.h; memory-bound kernels elementwise.h (bytes over HBM x hbm_fraction, or by class
// on Hopper) + kernel overhead.
// Communication is not included here (see parallel_comm.h). Formulas: docs/model.md §4 Step time.
#pragma once

#include <array>
#include <cstdint>

#include "core/efficiency.h"
#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/train_config.h"
#include "core/units.h"
#include "estimator/time/gemm.h"

namespace dsplan {

// What the per-layer costs depend on (the memo key of StepTimeModel).
struct OpKey {
  int tp = 1;
  int micro_batch = 1;
  int seq_len = 1;
  bool sequence_parallel = false;
  bool flash = false;
  Checkpointing ckpt = Checkpointing::none;
  Precision precision = Precision::bf16;
  Framework framework = Framework::deepspeed;
  AttentionKernel attention = AttentionKernel::auto_;
  CrossEntropy cross_entropy = CrossEntropy::eager;
  NormKernel norm_kernel = NormKernel::auto_;  // RMSNorm's kernels (TrainConfig::norm_kernel)
  bool fp8 = false;  // FP8 linears (TrainConfig::fp8)
  bool tf32 = false;  // fp32 with TF32 tensor-core GEMMs (TrainConfig::tf32)
  bool half_model = false;  // DDP over a 16-bit model, no autocast (TrainConfig::ddp_half_model)
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
  // Context parallelism: seq_len is the rank's s / cp tokens, and the flash attention core
  // runs cp steps of them (estimator/time/context_parallel.h).
  int cp = 1;
  // Expert parallelism (MoE models): ranks the routed experts are split over; sets the
  // tokens each local expert's GEMMs see (estimator/time/moe.h).
  int ep = 1;
  int etp = 1;  // expert tensor parallelism (TrainConfig::etp)
  bool deepep = false;  // DeepEP dispatch (TrainConfig::moe_deepep): the all-to-alls' cost
  // Megatron's unfused permutation (TrainConfig::moe_permute_fusion false): rows added
  // with atomics (estimator/time/moe.h).
  bool permute_atomic = false;
  // Megatron before its fused elementwise kernels (TrainConfig::megatron_unfused_elementwise).
  bool megatron_unfused = false;
  // MoE models with dense layers: the MoE share of the busiest rank's layers, whose cost
  // blends an MoE and a dense layer (params.h moe_layer_share); 1 otherwise.
  double moe_share = 1.0;
  // Selective recompute's modules (TrainConfig::recompute_modules); 0 unless selective.
  std::uint8_t recompute_modules = 0;
  bool operator==(const OpKey&) const = default;
};

struct OpCosts {
  // One transformer layer.
  Seconds fwd, bwd, recompute;
  Seconds attn_core_fwd;        // the attention core alone (what selective recompute redoes)
  Seconds attn_core_bwd;        // its backward (what a context-parallel ring step hides behind)
  Flops attn_core_flops_hw;     // its FLOPs
  Flops fwd_flops_hw;           // FLOPs executed in forward (full s x s for standard attention)
  Flops bwd_flops_hw;           // FLOPs executed in backward (flash: its 2.5x recompute incl.)
  Flops recompute_flops_hw;
  // The layer's linear GEMMs within fwd and bwd (data and weight gradients), reported by
  // --explain beside the attention core; the rest is memory-bound kernels.
  Seconds fwd_linear, bwd_linear;
  // Weight-gradient GEMMs of the column-parallel QKV and FC1 linears: what Megatron's
  // asynchronous TP backward runs while their input-gradient collective is in flight.
  Seconds wgrad_qkv, wgrad_fc1;
  // FP8 linears: casting one layer's weights to FP8 and transposing them, once per step
  // (the other micro-batches reuse the cast); with FP8 parameter gather the weights arrive
  // in FP8 and only the transpose runs. Zero without FP8.
  Seconds fp8_weight_cast, fp8_weight_transpose;
  // The forward of each Megatron selective-recompute module (indexed by RecomputeModule):
  // what recomputing it reruns in the backward. core_attn is attn_core_fwd; mla_up_proj the
  // up projections and rope; moe_act the routed experts' activation; layernorm the separate
  // norms; mlp a dense layer's MLP with its fused norm; moe the MoE layer's router, experts,
  // shared experts and token copies (its all-to-alls are the step's, step_costs.cc);
  // shared_experts their MLP. Zero where the layer has no such module.
  struct Module {
    Seconds t, host;
    Flops flops;
  };
  std::array<Module, kRecomputeModules> modules{};
  // Outside the layers.
  Seconds embed_fwd, embed_bwd;
  Seconds head_fwd, head_bwd;
  Seconds head_fwd_linear, head_bwd_linear;  // the logits GEMMs within head_fwd, head_bwd
  Flops head_flops_hw;          // logits GEMM forward + backward (+ recompute none)
  // One training metric evaluated on the logits outside the loss (TrainConfig::
  // logit_metrics): torch cross-entropy under autocast, i.e. a cast to fp32 and a log-softmax.
  Seconds logit_metric;
  // Host (CPU) time to issue each pass's kernels: launches x host_op_overhead. The times
  // above are the GPU's alone; the step adds what the host's issuing makes the GPU wait
  // (estimator/host_stall.h).
  struct Host {
    Seconds fwd, bwd, recompute, embed_fwd, embed_bwd, head_fwd, head_bwd, logit_metric;
    Seconds attn_core_fwd;
  } host;
};

// Sets the recompute fields (recompute, host.recompute, recompute_flops_hw) for `ckpt` from
// the forward's: a recomputed layer reruns its whole forward, selective recompute the
// modules named (`modules`, TrainConfig::recompute_modules; 0: the attention core). Nothing
// else in OpCosts depends on checkpointing, so StepTimeModel computes a layer's operators
// once and derives each checkpointing mode from them.
void set_recompute(OpCosts& o, Checkpointing ckpt, std::uint8_t modules = 0);

// `memo`, when given, shares GEMM estimates across calls for the same gpu and eff.
OpCosts operator_costs(const ModelSpec& m, const GpuSpec& gpu, const Efficiency& eff, const OpKey& k,
                       GemmMemo* memo = nullptr);

// Whether a FlashAttention kernel exists for this precision (16-bit only).
inline bool flash_supported(const OpKey& k) { return k.flash && k.precision != Precision::fp32; }
// The operand precision of the layer's GEMMs other than low-precision linears.
inline Precision gemm_precision(const OpKey& k) { return k.tf32 ? Precision::tf32 : k.precision; }

}  // namespace dsplan
