// What FP8 linears add to a layer (Transformer Engine as Megatron and NeMo run it; Megatron
// only; docs/model.md §4.1 "FP8 linears"). The four linears' forward, data- and
// weight-gradient GEMMs take FP8 operands (1 B, the FP8 tensor peak; operators.cc); the
// attention core, the logits GEMM and everything elementwise stay 16-bit. Hopper's FP8 MMA
// reads K-major operands only, so each FP8 operand of a weight gradient needs a transposed
// copy. Per micro-batch:
//  - QKV and FC1 inputs: the fused norm writes its output in FP8 (1 B instead of e on its
//    Ts x h elements) and a transpose writes the copy the weight gradient reads (r 1, w 1
//    over the gathered T x h);
//  - projection and FC2 inputs, and in backward every linear's output gradient: one
//    cast-transpose kernel (r e, w 1 + 1).
// Per step: the weights are cast and transposed (r e, w 2 per layer parameter), or, with
// FP8 parameter gather, arrive in FP8 and are only transposed (r 1, w 1).
// Per-tensor current scaling (Fp8Recipe::tensorwise) needs a tensor's amax before its cast:
// the norm writes its output in 16 bits, and every activation, gradient and weight cast is
// preceded by an amax pass (r e, one more kernel): each cast of T x n elements moves
// 2e + 2 bytes per element instead of e + 2 (the norm-fed ones 2e + 2 instead of 3 - e).
#pragma once

namespace dsplan {

struct Fp8Casts {
  double fwd_bytes = 0, bwd_bytes = 0;
  int fwd_kernels = 0, bwd_kernels = 0;
};

// T tokens of the micro-batch, Ts of them on this rank's norm output (sequence parallel),
// h hidden, e bytes per 16-bit element; proj_in and fc2_in: the projection's and FC2's
// input widths on this rank; outputs: the sum of the linears' output widths on this rank,
// `linears` of them.
inline Fp8Casts fp8_casts(double T, double Ts, double h, double e, double proj_in, double fc2_in,
                          double outputs, int linears, bool current) {
  Fp8Casts c;
  const double cast = current ? 2.0 * e + 2.0 : e + 2.0;  // bytes per element of one cast
  c.fwd_bytes = (current ? 2.0 * T * h * cast : 2.0 * (T * h * 2.0 - Ts * h * (e - 1.0))) +
                T * (proj_in + fc2_in) * cast;
  c.fwd_kernels = current ? 8 : 4;
  c.bwd_bytes = T * outputs * cast;
  c.bwd_kernels = current ? 2 * linears : linears;
  return c;
}

// An MoE layer (session 43): the attention's linears and the shared experts (if any) as
// above, except that only QKV reads the norm's output in FP8 (the pre-MLP norm feeds the
// router and the dispatcher in 16 bits, so the shared experts' and the routed experts'
// inputs are cast-transposed like the projection's); the routed experts' GEMMs take their
// own rows: the `rows` token copies this rank's experts compute (etp x routed), their
// up/gate input rows x h and down input rows x expert_in, and in backward their output
// gradients rows x expert_outputs. The router stays 16-bit (Megatron-Core's TopKRouter is a
// plain linear). Before session 43 the routed experts' casts were priced over the layer's
// T tokens, not their topk-times as many rows.
inline Fp8Casts fp8_moe_casts(double T, double Ts, double h, double e, double proj_in, double shared_in,
                              double dense_outputs, int dense_linears, double rows, double expert_in,
                              double expert_outputs, bool current) {
  Fp8Casts c;
  const double cast = current ? 2.0 * e + 2.0 : e + 2.0;
  const bool shared = shared_in > 0;
  c.fwd_bytes = (current ? T * h * cast : T * h * 2.0 - Ts * h * (e - 1.0)) +
                T * (proj_in + shared_in + (shared ? h : 0.0)) * cast + rows * (h + expert_in) * cast;
  c.fwd_kernels = (current ? 2 : 1) * (4 + (shared ? 2 : 0));
  c.bwd_bytes = T * dense_outputs * cast + rows * expert_outputs * cast;
  c.bwd_kernels = (current ? 2 : 1) * (dense_linears + 2);
  return c;
}

// Bytes per layer parameter of the once-per-step weight work.
inline double fp8_weight_bytes_per_param(double e, bool fp8_param_gather, bool current) {
  return fp8_param_gather ? 2.0 : current ? 2.0 * e + 2.0 : e + 2.0;
}

}  // namespace dsplan
