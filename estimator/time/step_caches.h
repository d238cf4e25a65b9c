// Memo tables behind StepTimeModel (see estimator/step_time.h for the threading rule):
// per-layer operator costs and per-parallelism communication/optimizer costs.
#pragma once

#include "estimator/step_time.h"
#include "estimator/time/collectives.h"
#include "estimator/time/context_parallel.h"
#include "estimator/time/memo_cache.h"
#include "estimator/time/operators.h"
#include "estimator/time/optimizer.h"
#include "estimator/time/parallel_comm.h"

namespace dsplan {

struct OpEntry {
  OpCosts op;
  ParallelComm tp;  // only the TP fields are filled
  CpRing cp_ring;   // context parallelism's K/V ring steps (zero when cp is 1)
};

struct CommKey {
  int tp = 1, pp = 1, dp = 1, ep = 1, micro_batch = 1, seq_len = 1, zero_stage = 0, overlap_comm = -1;
  int fused_optimizer = -1;
  bool megatron_fp32_grads = true;
  bool fsdp_hybrid = false;
  bool fsdp_reduce_fp32 = false;
  int fsdp_version = 1;
  bool overflow_step = false;
  // The DeepSpeed release's effects (TrainConfig::deepspeed_release): bit 0 BF16_Optimizer
  // (deepspeed_bf16_optimizer), bit 1 ZeRO-3's blocking fetches (deepspeed_zero3_sync_fetch).
  std::uint8_t deepspeed_release = 0;
  // bit 0: FP8/NVFP4 linears (TrainConfig::fp8), bit 1: their parameter gather
  // (fp8_param_gather), bit 2: NVFP4 (TrainConfig::nvfp4)
  std::uint8_t fp8 = 0;
  Precision precision = Precision::bf16;
  Framework framework = Framework::deepspeed;
  Optimizer optimizer = Optimizer::adam;
  Offload offload = Offload::none;
  bool sequence_parallel = false;
  std::uint8_t pp_split = 0;  // bit 0: embedding counted as a layer, bit 1: the loss
  double reduce_bucket = 0, allgather_bucket = 0, prefetch_bucket = 0;
  double moe_share = 1.0;  // OpKey::moe_share: the busiest rank's parameters depend on it
  int pp_first = -1, pp_last = -1;  // TrainConfig::pp_first_layers, pp_last_layers
  int vpp = 1;                      // with an explicit split the ranks' layers depend on it
  int mtp = 0;                      // TrainConfig::mtp_layers
  bool operator==(const CommKey&) const = default;
};

struct CommEntry {
  ParallelComm comm;  // all but the TP fields (those are the OpEntry's)
  OptimizerCosts opt;
  int layers_per_rank = 1, first_layers = 1, last_layers = 1;
  int middle_chunk_layers = 0;  // StepCosts::middle_chunk_layers
  // Multi-token prediction's projection (2h -> h) against a layer's matmul weights: the
  // share of a layer's linear GEMM time it takes (assemble_costs).
  double mtp_projection = 0;
};

struct StepTimeModel::Caches {
  explicit Caches(const Cluster& c, const Efficiency& e) : coll(c.node, e) {}
  CollectiveModel coll;
  MemoCache<OpKey, OpEntry, 4096> ops;
  // The same keyed without checkpointing (ckpt none): `ops` misses derive their
  // checkpointing mode from these (set_recompute) instead of recomputing the operators.
  MemoCache<OpKey, OpEntry, 1024> op_bases;
  GemmMemo gemm;  // the GEMMs behind `ops`
  MemoCache<CommKey, CommEntry, 8192> comm;
};

OpKey op_key(const TrainConfig& cfg);
CommKey comm_key(const TrainConfig& cfg);
std::uint64_t hash_of(const OpKey& k);
std::uint64_t hash_of(const CommKey& k);

// Memoised lookups (computed on a miss) and the StepCosts built from them.
const OpEntry& op_entry(StepTimeModel::Caches& c, const ModelSpec& m, const Cluster& cl,
                        const Efficiency& eff, const TrainConfig& cfg);
const CommEntry& comm_entry(StepTimeModel::Caches& c, const ModelSpec& m, const Cluster& cl,
                            const Efficiency& eff, const TrainConfig& cfg);
// What a layer moves besides its compute, in seconds per layer and micro-batch: Megatron's
// CPU activation offloading (TrainConfig::cpu_offload_layers: one layer's saved activations
// over the host link, PCIe or NVLink-C2C, on a copy stream beside the compute) and
// DeepSpeed's checkpoint options (cpu_checkpointing: a recomputed layer's input down in the
// forward, `ckpt_fwd`, and up before its recompute; partition_activations: its TP all-gather
// then; both on the compute stream, `ckpt_bwd`).
struct ActivationMoves {
  Seconds offload_copy;
  Seconds ckpt_fwd, ckpt_bwd;
};
ActivationMoves activation_moves(const ModelSpec& m, const SystemSpec& node, const Efficiency& eff,
                                 const CollectiveModel& coll, const TrainConfig& cfg);
StepCosts assemble_costs(const OpEntry& oe, const CommEntry& ce, const TrainConfig& cfg,
                         const Efficiency& eff, const ActivationMoves& moves = {});

}  // namespace dsplan
