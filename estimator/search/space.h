// The training-configuration space: the values each dimension may take, and the
// structural rules that make a point valid (divisibility, framework support, hardware
// support). A structurally invalid point is never evaluated; a valid point that does not
// fit in memory is still a result, with reasons.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/train_config.h"

namespace dsplan {

// The most micro-batches one optimizer step may accumulate (--gas, or a fixed global
// batch over micro-batch x dp): beyond it a step is a configuration error, not a plan.
inline constexpr int kMaxGradAccum = 65536;
inline constexpr int kMaxMicroBatch = 65536;     // samples per micro-batch
inline constexpr double kMaxGlobalBatch = 1e12;  // samples per optimizer step
inline constexpr int kMaxFlashHeadDim = 256;     // FlashAttention-class kernels
inline constexpr int kMaxGpus = 1'000'000;       // --gpus, and a validation row's num_gpus

struct SearchSpace {
  // The settings every point shares (framework, precision, optimizer, sequence length,
  // engine knobs...): make_config starts each point from this template and sets only the
  // dimensions below, so a new run-wide knob is a TrainConfig field and nothing more.
  // Its per-point fields (zero_stage, tp, pp, dp, vpp, cp, micro_batch, grad_accum,
  // checkpointing, recompute_layers, flash_attention, sequence_parallel, offload) are
  // ignored.
  TrainConfig run = [] {
    TrainConfig c;
    c.seq_len = 2048;
    return c;
  }();
  std::optional<std::int64_t> global_batch;  // fixed global batch; gas is derived
  bool tp_within_node = true;  // TP groups never cross a node (default)

  std::vector<int> zero;
  std::vector<int> tp;
  std::vector<int> pp;
  std::vector<int> vpp;
  std::vector<int> cp;  // context parallelism (Megatron only); default {1}
  // Expert parallelism (MoE models, Megatron only); default: {1} for a dense model, the
  // powers of two that divide the experts and the GPUs for an MoE model.
  std::vector<int> ep;
  std::vector<int> micro_batch;
  std::vector<int> grad_accum;  // used only without a fixed global batch
  std::vector<Checkpointing> checkpointing;
  // Megatron-Core's selective recompute modules (TrainConfig::recompute_modules), paired
  // with selective checkpointing only; default {0} (the attention core), and for a Megatron
  // model with multi-head latent attention or MoE layers also the modules that free the
  // most for the least rerun (cheap_recompute_modules).
  std::vector<std::uint8_t> recompute_modules;
  // Block recompute: layers per stage that recompute; 0 = half of the stage (rounded up).
  int recompute_layers = 0;
  std::vector<bool> flash;
  std::vector<bool> sequence_parallel;
  std::vector<Offload> offload;

  // True when every dimension holds exactly one value.
  bool pinned() const;
};

// Fills every empty dimension with its default range for this model and cluster:
// zero 0-3; tp powers of two up to a node that divide heads and kv heads; pp up to 64
// that divide the GPUs and (except under DeepSpeed) the layer count; vpp 1, and under
// Megatron with more than one micro-batch a step 1-6, 8, 10, 12 and 16; cp 1, and under
// Megatron from 8,192 tokens the powers of two that divide the GPUs and leave a rank
// at least 2,048 tokens;
// micro-batch powers of two 1-64 (1-512 for
// seq <= 512); gas {1}; checkpointing none/selective/full/block (half the stage's layers);
// recompute modules {0} (+ cheap_recompute_modules for Megatron MLA/MoE models);
// flash off/on where the GPU
// and precision support it; sp off/on; offload none/optimizer/all.
SearchSpace with_defaults(SearchSpace s, const ModelSpec& m, const Cluster& c);

// Whether a flash-class kernel of this run trains learned attention sinks (gpt-oss;
// ModelSpec::attention_sinks): Transformer Engine's cuDNN attention under Megatron-Core,
// which auto picks there; FlashAttention has no backward for them.
bool sinks_trainable(const TrainConfig& run);

// Rules that depend only on the model, cluster (and framework, for PP), for checking
// user-given values: returns "" when the degree may be used, else why not.
std::string tp_problem(int tp, const ModelSpec& m, const Cluster& c, bool within_node);
// `first_layers`, `last_layers`: a pinned explicit split (TrainConfig::pp_first_layers), -1 none.
std::string pp_problem(int pp, const ModelSpec& m, const Cluster& c, Framework fw, int megatron_release = 0,
                       int first_layers = -1, int last_layers = -1);

// Sets a point's expert parallelism (cfg.ep) after make_config and appends why it cannot
// run: a dense model takes ep 1 only; an MoE model needs Megatron, ep dividing the experts
// and tp x cp x dp (Megatron-Core folds the expert ranks into them), and sequence
// parallelism when tp > 1.
void set_expert_parallel(const ModelSpec& m, int ep, TrainConfig& cfg, std::vector<std::string>& why);

// The output-discarding modules a Megatron model has (mla_up_proj with MLA; moe_act with MoE
// layers; layernorm with either): each frees a tensor for an elementwise pass or two (the up
// projections are small GEMMs). NVIDIA's DeepSeek-V3 and gpt-oss recipes run such sets.
std::uint8_t cheap_recompute_modules(const ModelSpec& m);

// Sets a point's recompute modules after make_config; appends why not when modules are
// named without selective checkpointing.
void set_recompute_modules(std::uint8_t modules, TrainConfig& cfg, std::vector<std::string>& why);

// Builds the TrainConfig of one point; returns the reasons it is structurally invalid
// (empty when valid). `cfg.dp` and `cfg.grad_accum` are derived here.
std::vector<std::string> make_config(const SearchSpace& s, const ModelSpec& m, const Cluster& c, int zero,
                                     int tp, int pp, int vpp, int cp, int mbs, int gas, Checkpointing ck,
                                     bool flash, bool sp, Offload off, TrainConfig& cfg);

}  // namespace dsplan
