// Communication volumes of each parallelism and their times on the cluster. Placement
// follows Megatron's parallel_state and DeepSpeed's PipeModelDataParallelTopology (axes
// pipe, data, model, row-major): TP innermost (consecutive ranks, inside a node), then DP
// (stride tp), then PP outermost (stride tp x dp). Per rank of the most loaded stage:
//  - TP: 2 all-reduces of b s h per layer in forward and 2 in backward (sequence
//    parallel: all-gather + reduce-scatter pairs instead); embedding and head add one each.
//  - DP: gradients reduced in buckets: all-reduce (ZeRO-0, DeepSpeed ZeRO-1/2), reduce-scatter
//    (ZeRO-3, Megatron distributed optimizer, FSDP); at
//    the accumulation boundary for ZeRO-0/1, every micro-batch for ZeRO-2/3 (partitioned
//    gradients cannot accumulate unreduced). ZeRO-1/2 all-gather the updated 16-bit
//    parameters after the step; ZeRO-3 all-gathers each layer's parameters before its
//    forward and again before its backward.
//  - PP: b s h activations (gradients back) between adjacent stages, 1/t of it when TP
//    ranks scatter/gather it (Megatron, or sequence parallel).
//  - Tied embeddings with PP: the first and last stage all-reduce the embedding gradient.
// Formulas and DeepSpeed/Megatron behaviour assumed: docs/model.md §4 Step time, "Parallelism".
#pragma once

#include "core/efficiency.h"
#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/train_config.h"
#include "core/units.h"
#include "estimator/time/collectives.h"

namespace dsplan {

struct Placement {
  CommGroup tp, dp, pp_p2p, embed;
  // MoE (TrainConfig::ep, etp): the etp ranks splitting each expert (consecutive), the ep
  // ranks exchanging tokens (stride etp: Megatron-Core's expert grid orders etp, ep, dp) and
  // the ranks holding the same experts, tp x dp / (ep x etp) of them at stride ep x etp (dp
  // here includes cp).
  CommGroup ep, edp, etp;
  // The group parameters are sharded over (dp; FSDP hybrid sharding: a node's dp ranks)
  // and its replicas across nodes (one rank per node; 1 rank without hybrid sharding).
  CommGroup dp_shard, dp_replicas;
};
Placement place(const TrainConfig& cfg, const SystemSpec& node);

// Parameter counts (elements) held by one rank.
struct StageParams {
  int layers_per_rank = 1;                // the most any rank holds (TrainConfig::stage_layers)
  int first_layers = 1, last_layers = 1;  // the first and last ranks' (fewer when accounted)
  double layer = 0;                       // one transformer layer on one TP rank (MoE: its experts included)
  double layer_expert = 0;                // MoE: the part of `layer` that is this rank's routed experts
  double layer_gathered = 0; // the part ZeRO-3 gathers (persistent small tensors excluded)
  double first_extra = 0;    // embeddings (and the head too when pp == 1)
  double last_extra = 0;     // final norm, head / tied-embedding copy, pooler
  double max_stage() const;  // params of the most loaded stage
  double nonlayer() const;   // non-layer params of that stage
  double expert_stage() const { return layers_per_rank * layer_expert; }
};
StageParams stage_params(const ModelSpec& m, const TrainConfig& cfg);
// Parameter tensors of the most loaded stage: weights and biases of the layers' linears
// and norms (layer_tensors: the model code's linears, fused by Megatron's layers), plus five outside
// them (embeddings, final norm, head).
int stage_tensors(const ModelSpec& m, const StageParams& sp, const TrainConfig& cfg);

// Bytes per gradient element as the framework reduces them.
double grad_element_bytes(const TrainConfig& cfg);

struct ParallelComm {
  Seconds tp_layer_fwd, tp_layer_bwd, tp_embed_fwd, tp_head_fwd, tp_head_bwd;
  // The backward's per-layer TP collectives split for Megatron's asynchronous TP backward
  // (tp_layer_bwd = 2 x tp_bwd_input_grad + tp_bwd_blocking): the input-gradient all-reduce
  // (reduce-scatter with SP) of each column-parallel linear, which can run under that
  // linear's weight-gradient GEMM, and what must finish first (SP: the all-gathers of the
  // row-parallel linears' output gradients).
  Seconds tp_bwd_input_grad, tp_bwd_blocking;
  // The MLP's TP collectives exist (false for an MoE layer without shared experts, whose
  // experts are not TP-split: only the attention's pair remains).
  bool tp_mlp = true;
  // MoE: the all-to-alls of one layer (dispatch and combine), forward and backward.
  Seconds ep_layer_fwd, ep_layer_bwd;
  Seconds layer_grad_reduce;   // per layer, per reduction round
  Seconds layer_grad_reduce_replica;  // FSDP hybrid: the part of it that all-reduces the shard
                                      // across the replicas (their own communicator)
  Seconds grad_reduce_tail;    // non-layer gradients, per round
  Seconds grad_reduce_tail_replica;  // FSDP hybrid: its all-reduce across the replicas
  Bytes bucket_bytes, layer_grad_bytes;
  Seconds layer_param_gather;  // ZeRO-3: per layer per pass (fwd or bwd)
  Seconds nonlayer_gather;     // ZeRO-3: embeddings/head per pass, not prefetched
  Seconds param_allgather;     // ZeRO-1/2 after the step
  Seconds embed_grad_sync;
  Seconds p2p;
  Seconds p2p_gather;          // DeepSpeed's engine with TP: all-gather of a partitioned stage tensor
  Seconds layer_fwd_extra;     // per layer per micro-batch: FSDP2's all-gather copy-out
  Seconds layer_bwd_extra;     // per layer per micro-batch: ZeRO-2/3 copies into the
                               // reduction buffer and hooks, BF16_Optimizer's fp32 adds,
                               // FSDP's in-place pre-divide of the unsharded gradient
  Seconds layer_grad_accumulate;  // per layer, each micro-batch after the first: .grad += g
  Seconds layer_step_passes;      // per layer, once per step: torch DDP's copy into its
                                  // all-reduce buckets and back, DeepSpeed ZeRO-0/1's
                                  // reduction passes, PyTorch 1.x's zeroed-gradient passes
  Seconds layer_zero3_overhead;   // ZeRO-3 fetch/release bookkeeping per layer per pass,
                                  // blocking (DeepSpeed before 0.6.0 synchronised each fetch)
  Seconds layer_zero3_host;       // the same bookkeeping as host time per layer per pass
                                  // (since 0.6.0: fetches wait on events, the host runs ahead)
  bool every_micro_batch = false;
  bool overlap = false;
  bool prefetch = false;
};

// Which parts parallel_comm fills: all of them, only the TP collectives (tp_* fields: they
// depend on tp, the micro-batch and the sequence, not on dp or pp), or all but those.
// StepTimeModel memoises the two halves under different keys.
enum class CommParts : std::uint8_t { all, tp_only, without_tp };

ParallelComm parallel_comm(const ModelSpec& m, const TrainConfig& cfg, const SystemSpec& node,
                           const GpuSpec& gpu, const Efficiency& eff, const CollectiveModel& coll,
                           CommParts parts = CommParts::all);

}  // namespace dsplan
