// Per-operator costs of one training step, the hand-off between the analytic cost model
// (estimator/time, which fills it) and the step simulator (simulator/, which schedules
// it as a task graph). Durations are for ONE micro-batch on ONE rank of the most loaded
// pipeline stage unless stated otherwise. Communication durations are the time the
// collective would take on its own link (not yet overlapped).
#pragma once

#include <string>
#include <vector>

#include "core/units.h"

namespace dsplan {

struct LayerCosts {
  Seconds fwd;              // forward compute of one transformer layer
  Seconds bwd;              // backward compute (data + weight gradients)
  Seconds recompute;        // extra forward work redone in backward (0 without checkpointing)
  Seconds tp_comm_fwd;      // TP all-reduce (or RS+AG with SP) in forward; blocking
  Seconds tp_comm_bwd;      // same in backward; blocking
  Seconds ep_comm_fwd, ep_comm_bwd;  // MoE all-to-alls: the part of tp_comm_* that is theirs
  Seconds param_gather;     // ZeRO-3 all-gather of this layer's parameters (0 otherwise)
  Seconds grad_reduce;      // DP reduction (all-reduce / reduce-scatter) of this layer's grads
  Seconds grad_reduce_replica;  // part of grad_reduce on FSDP hybrid's replica group
  Bytes grad_bytes;             // this layer's gradient bytes on this rank (for bucketing)
};

struct StepCosts {
  int pp = 1;
  int vpp = 1;                 // virtual stages per rank (interleaved 1F1B when > 1)
  int micro_batches = 1;       // gradient-accumulation steps per optimizer step
  int layers_per_rank = 1;     // transformer layers held by one pipeline rank (all chunks)
  // The first and last ranks' layers: layers_per_rank, or one fewer where Megatron counts
  // the embedding or the loss as a layer (TrainConfig::stage_layers); 0 = layers_per_rank.
  int first_layers = 0, last_layers = 0;
  int first_rank_layers() const { return first_layers > 0 ? first_layers : layers_per_rank; }
  int last_rank_layers() const { return last_layers > 0 ? last_layers : layers_per_rank; }
  // Interleaved stages with an explicit split (TrainConfig::middle_chunk_layers): the layers
  // of every chunk but the first rank's first and the last rank's last, which hold the rest
  // of their rank's layers. 0: each rank's layers spread evenly over its chunks (the
  // accounted split's missing layer lands in the end chunk that way).
  int middle_chunk_layers = 0;
  LayerCosts layer;
  Seconds embed_fwd, embed_bwd;  // first stage, per micro-batch
  Seconds head_fwd, head_bwd;    // last stage: final norm, logits, loss; per micro-batch
  Seconds p2p;                   // activation (or gradient) send between adjacent stages
  // Sends hold the sender's compute stream until they complete: Megatron's batched
  // send/recv waits before the next pass (2021-22 code even synchronises the device), and
  // DeepSpeed's pipeline engine runs its sends as blocking instructions. False when
  // Megatron overlaps p2p with compute (interleaved schedules, default since 2023-10).
  bool p2p_blocking = true;
  // DeepSpeed's pipeline engine (TrainSchedule, simulator/deepspeed_schedule.h): instead of
  // one send after each pass, every step opens with blocking send/recv pairs with one
  // neighbour, each holding both ranks' compute streams from the moment the later of them
  // gets there: a middle stage makes four transfers per micro-batch, an end stage two.
  // Requires vpp == 1.
  bool p2p_exchange = false;
  // With p2p_exchange and TP: the engine sends each stage tensor as 1/tp slices and
  // all-gathers it over the TP group before use (PartitionedTensor.full()): a stage's
  // forward gathers its input, its backward its own output and the received gradient
  // (not on the first stage's forward or the last stage's backward). Per gather, blocking.
  Seconds p2p_gather;
  Seconds embed_grad_sync;       // tied-embedding all-reduce between first and last stage
  Bytes bucket_bytes;            // DP gradient bucket size (DeepSpeed reduce_bucket_size)
  // Reduce each bucket as soon as the backward fills it (during the last micro-batch's
  // backward, or every micro-batch's with grad_reduce_every_micro_batch); otherwise all
  // reductions, then the offload copy, follow the backward.
  bool overlap_grad_reduce = true;
  bool zero3_prefetch = false;      // ZeRO-3 gathers overlap the previous layer's compute
  // ZeRO-3 / FSDP issue their parameter all-gathers and gradient reduce-scatters on one
  // process group, whose NCCL communicator runs one collective at a time: a layer's
  // reduction queues behind the next layer's prefetched gather and delays the one after.
  // FSDP hybrid sharding's all-reduce across the replicas (layer.grad_reduce_replica)
  // follows each reduce-scatter on the replica group's own communicator.
  bool gather_shares_reduce = false;
  // ZeRO-2/3 partition gradients, so every micro-batch's backward reduces its layer
  // buckets, grad_reduce_tail and offload_d2h (not only the last micro-batch's).
  bool grad_reduce_every_micro_batch = false;
  // DP reduction of the gradients OUTSIDE the layer buckets (embeddings, final norm, head),
  // per reduction round, issued after the backward and never overlapped. It does NOT hold
  // the last layer bucket: that bucket's exposure follows from layer.grad_reduce,
  // bucket_bytes and the backward it overlaps (closed form and simulator alike).
  Seconds grad_reduce_tail;
  Seconds grad_reduce_tail_replica;  // part of it on FSDP hybrid's replica group
  Seconds param_allgather;       // ZeRO-1/2 parameter all-gather after the optimizer step
  Seconds optimizer;             // optimizer step on GPU, or CPU Adam when offloaded
  Seconds offload_d2h;           // gradients to host (offload), per reduction round
  Seconds offload_h2d;           // updated parameters back to the device (offload)
  // Fraction of compute throughput lost while a data-parallel collective (gradient
  // reduction, ZeRO-3 gather) runs beside it on the same rank (Efficiency::
  // overlap_compute_loss). 0 = the streams do not slow each other.
  double overlap_compute_loss = 0.0;
  // Host (CPU) time to issue each pass's kernels, per micro-batch like the GPU times above
  // (launches x Efficiency::host_op_overhead). The host runs ahead of the GPU; where it
  // issues slower than the GPU runs, the GPU waits (estimator/host_stall.h).
  struct HostIssue {
    Seconds layer_fwd, layer_bwd, layer_recompute, embed_fwd, embed_bwd, head_fwd, head_bwd, optimizer;
  } host;
};

}  // namespace dsplan
