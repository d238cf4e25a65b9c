// Mixture-of-experts layer costs beyond the GEMMs (docs/model.md §4.11), as Megatron-Core
// runs a dropless MoE layer with the all-to-all token dispatcher, grouped expert GEMMs and
// expert tensor parallelism 1:
//  - the router: a hidden x experts linear (priced with the layer's GEMMs), its logits
//    softmaxed and top-k selected in fp32, plus the load-balancing loss's reductions;
//  - permutation: each token copied once per chosen expert into expert order, and the
//    reverse (unpermute) that weights each expert output by its routing probability and
//    sums the top-k copies back into one token; streaming passes as Transformer Engine's
//    fused kernels run them, or, unfused (TrainConfig::moe_permute_fusion false), the sum
//    and the gather's backward as atomic row additions (MemKernel::scatter_add, index_add);
//  - two all-to-alls over the ep ranks each way (dispatch and combine), each moving the
//    rank's Ts x topk token copies of h elements; they run on the compute stream
//    (Megatron-Core does not overlap them by default) and are exposed.
// DeepEP (Megatron's flex dispatcher, --moe-enable-deepep) sends a token once per remote
// node and GPU it needs rather than once per expert (deepep_time).
// Assumes balanced routing: every expert receives ep x Ts x topk / experts tokens a
// micro-batch (the load-balancing loss's aim). Real routing is uneven, and the step waits
// for the busiest expert rank: the prediction is a lower bound on the MoE layer's time.
#pragma once

#include "core/units.h"
#include "estimator/time/collectives.h"
#include "estimator/time/elementwise.h"
#include "estimator/time/op_dims.h"
#include "estimator/time/operators.h"

namespace dsplan {

// The router's softmax/top-k/aux-loss passes and the permute/unpermute copies of one MoE
// layer, forward and backward (zero for a dense layer).
Elementwise moe_elementwise(const op::Dims& d);

// Bytes one rank sends in one all-to-all of a MoE layer: its token copies, e bytes each.
double moe_all_to_all_bytes(const op::Dims& d);

// Time of an all-to-all in which each of `ranks` GPUs sends `bytes` in all (1/ranks of it
// to itself), `ranks_per_node` of them sharing a node: NCCL's grouped send/recv, every pair
// at once, bounded by each GPU's NVLink bandwidth for the peers inside the node and by its
// share of the node's NICs for the rest.
Seconds all_to_all_time(const CollectiveModel& c, double bytes, CommGroup g);

// Expected number of `units` (GPUs or nodes, each holding experts / units consecutive
// experts) that one token's top-k experts touch, with uniform routing: 1 - (1 - 1/units)^k
// of each without groups; with group-limited routing (ModelSpec::moe_groups) its
// moe_group_topk groups drawn uniformly, then the k experts uniformly among theirs
// (hypergeometric over the groups a unit holds, or the unit's share of a group it is
// part of). Draws with replacement: exact enough while k is small against the experts.
double distinct_units(const ModelSpec& m, int units);

// One dispatch (or combine) of DeepEP's normal kernels (TrainConfig::moe_deepep): each token
// crosses the network once per remote node its experts are on (RDMA to the same local rank
// there), then reaches each GPU it needs over NVLink, the two stages pipelined; `tokens`
// the rank's tokens, e bytes an element.
Seconds deepep_time(const CollectiveModel& c, const ModelSpec& m, double tokens, double e, CommGroup g);

// A rank whose layers are part MoE, part dense (ModelSpec::first_dense_layers,
// moe_layer_step; params.h moe_layer_share): every per-layer cost of the two layer kinds
// weighted share : 1 - share. The embedding and head costs are the same in both.
OpCosts blend_layers(const OpCosts& moe, const OpCosts& dense, double share);

}  // namespace dsplan
