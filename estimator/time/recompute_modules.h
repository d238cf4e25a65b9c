// The forward of each Megatron-Core selective-recompute module of one layer (OpCosts::
// modules; docs/model.md §4, "Recompute modules"), what recomputing it reruns in the
// backward: core_attn the attention core's pass; mla_up_proj MLA's up projections and rope
// (mla.h); moe_act the routed experts' activation over their token copies; layernorm the
// norms that are modules of their own in Megatron's TE spec (MLA's input norm, an MoE
// layer's pre-MLP norm), one fused kernel each; mlp a dense layer's FC1, activation, FC2 and
// the norm fused into FC1; moe the router, the experts' and shared experts' GEMMs and
// activation and the permutation passes (its all-to-alls are the step's, step_costs.cc);
// shared_experts their MLP. A recomputed FP8 GEMM's input casts are left out.
#pragma once

#include "estimator/time/op_acc.h"
#include "estimator/time/op_dims.h"
#include "estimator/time/operators.h"

namespace dsplan::op {

// Fills o.modules for the layer of `d`; `core` is the attention core's forward, `blank` an
// empty accumulator on the layer's GPU.
void module_costs(OpCosts& o, const Dims& d, const Acc& core, const Acc& blank);

}  // namespace dsplan::op
