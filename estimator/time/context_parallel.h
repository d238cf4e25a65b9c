// Context parallelism as Megatron-Core runs it with Transformer Engine's attention
// (--context-parallel-size cp, cp_comm_type p2p): every sequence is cut into 2 cp chunks and
// rank i holds chunks i and 2cp - 1 - i, so that each rank does the same share of causal
// attention. The cp ranks of a group hold the same parameters. Per rank, then:
//  - every token-wise operator (linears, norms, activations, TP collectives, pipeline
//    sends, activation memory) sees s / cp tokens;
//  - attention runs cp steps: the rank's queries against its own key/value chunk, then
//    against each chunk passed around the ring, cp - 1 sends of K and V (and in backward of
//    K, V and their gradients) to the next rank, each overlapped with the step's attention;
//    in all, 1/cp of the whole sequence's attention work;
//  - gradients reduce, and the distributed optimizer shards, over dp x cp ranks (Megatron's
//    data-parallel group with context parallelism), placed tp-innermost: tp, cp, dp, pp.
// So a configuration is priced through its rank view (TrainConfig::cp_rank_view: dp x cp
// ranks of data parallelism, s / cp tokens, cp kept) plus the attention multiplier and the
// ring's exposed sends.
// Not modelled: the all-gather variant (cp_comm_type a2a / all_gather), the output
// rescaling between steps, and the ring's send/receive buffers (two K/V chunks).
// Formulas: docs/model.md §4.9 "Context parallelism".
#pragma once

#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/train_config.h"
#include "core/units.h"
#include "estimator/time/collectives.h"

namespace dsplan {

// One ring step of the forward (K and V of the rank's chunk to the next rank) and of the
// backward (K, V and their gradients), on the link between adjacent cp ranks: NVLink when
// a tp x cp block fits in a node, else the node's NIC share. Zero when cp is 1. `view` is
// a rank view (its seq_len is the rank's chunk pair).
struct CpRing {
  Seconds step_fwd, step_bwd;
};
CpRing cp_ring(const ModelSpec& m, const TrainConfig& view, const SystemSpec& node,
               const CollectiveModel& coll);

// What the ring adds to a layer's forward and backward: cp - 1 steps, each exposing what its
// send outlasts the step's attention (1/cp of the layer's attention core).
struct CpExposed {
  Seconds fwd, bwd;
};
CpExposed cp_exposed(const CpRing& ring, int cp, Seconds attn_fwd, Seconds attn_bwd);

}  // namespace dsplan
