// What FP8 linears add to a layer (Transformer Engine as Megatron and NeMo run it; Megatron
// only; docs/model.md §4.1 "FP8 linears"). The four linears' forward, data- and
// weight-gradient GEMMs take FP8 operands (1 B, the FP8 tensor peak; operators.cc); the
// attention core, the logits GEMM and everything elementwise stay 16-bit. Hopper's FP8 MMA
// reads K-major operands only, so each FP8 operand of a weight gradient needs a transposed
// copy (below); Blackwell's takes any layout, and there Transformer Engine keeps per-tensor
// FP8 as one copy: no transposes (the `one_copy` arguments, fp8_single_copy). Per micro-batch:
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
// MXFP8 block scaling (Fp8Recipe::mxfp8, Blackwell only) keeps one E8M0 scale per 32
// elements along the GEMM's reduction dimension, so a tensor's row-wise and column-wise
// copies are two quantizations of the 16-bit values, not a transpose of one: each cast
// reads e and writes 1 + 1 bytes and 2/32 of scales, in one kernel with no amax pass (the
// block's amax is taken in registers). The norm writes 16 bits and its output is quantized
// like any activation (e + 2 + 1/16 instead of delayed scaling's 3 - e); the weights are
// quantized both ways each step whether or not they were gathered in FP8. Not priced: the
// scale-factor swizzles Transformer Engine may run before a GEMM (1/32 of an operand's
// bytes), and any rate difference of block-scaled GEMMs (priced at the FP8 tensor peak).
// NVFP4 (Fp8Recipe::nvfp4, Transformer Engine's NVFP4BlockScaling; Blackwell only): the
// same linears' GEMMs take E2M1 operands with an E4M3 scale per 16 elements (0.5 + 1/16
// bytes, the FP4 tensor peak) and an fp32 scale per tensor, so every cast needs its
// tensor's amax first. Activations and output gradients are quantized 1x16 along the
// reduction dimension both ways, the column-wise copy (the weight gradient's operand)
// after a 16-point random Hadamard transform: one amax kernel (the plain and the
// transformed amax in one read, r e), a row-wise quantization (r e, w 9/16) and a
// column-wise Hadamard quantization (r e, w 9/16), 3e + 9/8 bytes per element in three
// kernels. Weights are quantized in 16 x 16 blocks, so one kernel writes both copies after
// the amax pass (2e + 9/8 in two); gathered in NVFP4 (--fp4-param-gather, Megatron-Bridge's
// default) they are only transposed (r 9/16, w 9/16). Not priced: the Hadamard transform's
// tensor-core math inside the casts, stochastic rounding of the gradients, and the layers
// a recipe keeps in bf16 (Megatron's first_last_layers_bf16, off unless set).
#pragma once

#include "core/train_config.h"

namespace dsplan {

struct Fp8Casts {
  double fwd_bytes = 0, bwd_bytes = 0;
  int fwd_kernels = 0, bwd_kernels = 0;
};

// Bytes per element of one activation or gradient cast (read e, write the FP8 copies and
// scales), and the kernels it takes. `one_copy` (fp8_single_copy: per-tensor FP8 on
// Blackwell, whose FP8 GEMMs take any layout): the cast writes no transposed copy.
inline double fp8_cast_bytes(double e, Fp8Recipe r, bool one_copy = false) {
  const double copies = one_copy ? 1.0 : 2.0;  // per-tensor recipes only; block-scaled keep two
  switch (r) {
    case Fp8Recipe::tensorwise:
      return 2.0 * e + copies;
    case Fp8Recipe::mxfp8:
      return e + 2.0 + 2.0 / 32.0;
    case Fp8Recipe::nvfp4:
      return 3.0 * e + 2.0 * kNvfp4Bytes;
    case Fp8Recipe::delayed:
      break;
  }
  return e + copies;
}
inline int fp8_cast_kernels(Fp8Recipe r) {
  return r == Fp8Recipe::nvfp4 ? 3 : r == Fp8Recipe::tensorwise ? 2 : 1;
}
// Kernels of one weight's per-step cast of its 16-bit copy (NVFP4: amax, then both copies).
inline int fp8_weight_cast_kernels(Fp8Recipe r) { return r == Fp8Recipe::nvfp4 ? 2 : fp8_cast_kernels(r); }

// One norm-fed linear input (QKV, FC1): T gathered tokens, Ts on this rank, h wide. Delayed
// scaling: the norm writes FP8 (saving e - 1 on Ts x h) and a transpose writes the copy the
// weight gradient reads (r 1, w 1 over T x h); the others cast the 16-bit norm output.
// With one copy (Blackwell) delayed scaling's norm output needs no transpose at all.
inline double fp8_norm_fed_bytes(double T, double Ts, double h, double e, Fp8Recipe r,
                                 bool one_copy = false) {
  if (r == Fp8Recipe::delayed) return (one_copy ? 0.0 : T * h * 2.0) - Ts * h * (e - 1.0);
  return T * h * fp8_cast_bytes(e, r, one_copy);
}
// The transpose kernels delayed scaling's norm-fed inputs need: one each, none with one copy.
// The kernels of one norm-fed input: delayed scaling's transpose (none with one copy), or
// the recipe's cast kernels over the 16-bit norm output.
inline int fp8_norm_fed_kernels(Fp8Recipe r, bool one_copy) {
  return r == Fp8Recipe::delayed ? (one_copy ? 0 : 1) : fp8_cast_kernels(r);
}

// T tokens of the micro-batch, Ts of them on this rank's norm output (sequence parallel),
// h hidden, e bytes per 16-bit element; proj_in and fc2_in: the projection's and FC2's
// input widths on this rank; outputs: the sum of the linears' output widths on this rank,
// `linears` of them.
inline Fp8Casts fp8_casts(double T, double Ts, double h, double e, double proj_in, double fc2_in,
                          double outputs, int linears, Fp8Recipe r, bool one_copy = false) {
  Fp8Casts c;
  const double cast = fp8_cast_bytes(e, r, one_copy);
  const int k = fp8_cast_kernels(r);
  c.fwd_bytes = 2.0 * fp8_norm_fed_bytes(T, Ts, h, e, r, one_copy) + T * (proj_in + fc2_in) * cast;
  c.fwd_kernels = 2 * k + 2 * fp8_norm_fed_kernels(r, one_copy);
  c.bwd_bytes = T * outputs * cast;
  c.bwd_kernels = k * linears;
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
                              double expert_outputs, Fp8Recipe r, bool one_copy = false) {
  Fp8Casts c;
  const double cast = fp8_cast_bytes(e, r, one_copy);
  const int k = fp8_cast_kernels(r);
  const bool shared = shared_in > 0;
  c.fwd_bytes = fp8_norm_fed_bytes(T, Ts, h, e, r, one_copy) +
                T * (proj_in + shared_in + (shared ? h : 0.0)) * cast + rows * (h + expert_in) * cast;
  c.fwd_kernels = k * (3 + (shared ? 2 : 0)) + fp8_norm_fed_kernels(r, one_copy);
  c.bwd_bytes = T * dense_outputs * cast + rows * expert_outputs * cast;
  c.bwd_kernels = k * (dense_linears + 2);
  return c;
}

// Bytes per layer parameter of the once-per-step weight work: a transpose of the gathered
// FP8 weight, or a cast of the 16-bit one (MXFP8: always the two quantizations; NVFP4: a
// transpose of the gathered NVFP4 weight, or the amax pass and the 16 x 16 quantization).
// With one copy (Blackwell) a gathered FP8 weight needs no transpose: nothing.
inline double fp8_weight_bytes_per_param(double e, bool fp8_param_gather, Fp8Recipe r,
                                         bool one_copy = false) {
  if (r == Fp8Recipe::nvfp4) return fp8_param_gather ? 2.0 * kNvfp4Bytes : 2.0 * e + 2.0 * kNvfp4Bytes;
  if (fp8_param_gather && r != Fp8Recipe::mxfp8) return one_copy ? 0.0 : 2.0;
  return fp8_cast_bytes(e, r, one_copy);
}

}  // namespace dsplan
