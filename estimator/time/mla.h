// Multi-head latent attention (DeepSeek-V2/V3; ModelSpec::kv_lora_rank > 0) as Megatron-Core
// runs it (megatron/core/transformer/multi_latent_attention.py, MLASelfAttention; docs/
// model.md §4.12):
//  - down projections duplicated on every TP rank, on the rank's sequence-parallel slice
//    (Ts tokens): hidden -> q_lora_rank and hidden -> kv_lora_rank + qk_rope_head_dim;
//  - an RMSNorm on each latent, on the same slice;
//  - column-parallel up projections on all T tokens (with SP they all-gather the latents:
//    mla_gathered_width), q_lora_rank -> heads x (head_dim + rope) and kv_lora_rank ->
//    heads x (head_dim + v_head_dim); without q_lora_rank a column-parallel hidden ->
//    heads x (head_dim + rope) query projection of the gathered hidden states instead;
//  - the rotary part of queries and of the one shared rotary key rotated and the per-head
//    query, key and value assembled by the fused MLA rope kernels (apply_rope_fusion), one
//    each for the query and the key/value, reading and writing each element once;
//  - the attention core over heads with query/key width head_dim + rope and value width
//    v_head_dim; the output projection from heads x v_head_dim.
// Assumes TE's fused RMSNorm and the fused rope kernels; the down projections' weight
// gradients are reduced over TP by Megatron's duplicated-parameter handling (not priced).
#pragma once

#include <vector>

#include "core/model_spec.h"
#include "estimator/time/elementwise.h"
#include "estimator/time/op_dims.h"

namespace dsplan {

// One forward GEMM of the attention's input projections on one TP rank, M x N x K.
struct MlaGemm {
  double m, n, k;
  bool up = false;  // an up projection (or the direct query projection): what mla_up_proj recomputes
};
// The query and key/value projections: q down and up (or the direct query projection), kv
// down and up. Empty for a model without MLA.
std::vector<MlaGemm> mla_input_gemms(const op::Dims& d);

// The latent norms and the fused rope/assembly kernels, forward and backward.
Elementwise mla_elementwise(const op::Dims& d);
// The rope/assembly kernels alone (with the up projections, what mla_up_proj recomputes).
Elementwise mla_rope_elementwise(const op::Dims& d);

// Elements per token that sequence parallelism all-gathers before the attention's input
// projections (and reduce-scatters in the backward): the two latents and the rotary key
// (the hidden states instead of the query latent without q_lora_rank); hidden without MLA.
double mla_gathered_width(const ModelSpec& m);

}  // namespace dsplan
