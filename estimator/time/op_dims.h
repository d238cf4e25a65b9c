// The dimensions every operator cost of one transformer layer is written in (docs/model.md
// §4 Step time, "Operator costs"): b micro-batch, s sequence, h hidden, t TP degree,
// T = b s tokens, Ts = T/t with sequence parallelism (norms, dropout and residual adds run
// on a 1/t slice) and T otherwise, e bytes per activation element, ew bytes per element
// of the elementwise tensors (4 under torch autocast, whose norms, softmax and residual
// stream come out in fp32; e otherwise). Shared by operators.cc and elementwise.cc.
#pragma once

#include <vector>

#include "core/model_spec.h"
#include "estimator/params.h"
#include "estimator/time/operators.h"

namespace dsplan::op {

struct Dims {
  double b, s, h, hq, hkv, f, t, T, Ts, e, ew, heads;
  bool gated, megatron, flash, causal, autocast, act_unfused, dropout;
  // Megatron's fused scale-mask-softmax and bias-dropout-add (false before 2020-09 and for
  // every other framework's model code).
  bool fused_elementwise;
  bool rms, rope;  // RMSNorm; rotary position embedding of q and k
  bool norm_fused;    // pre-norm RMSNorm in one kernel each way (OpKey::norm_kernel resolved)
  bool norm16_fused;  // the same for the norms of 16-bit inputs (query/key, post-norms)
  bool fp8;           // FP8 (or NVFP4) linears
  Precision linear_p;  // their GEMMs' operand precision: fp8, nvfp4, or the 16-bit one
  Precision gemm_p;    // the other GEMMs' (the training precision; tf32 for fp32 on TF32)
  bool mxfp8;          // FP8 linears under the MXFP8 recipe (block-scaled GEMMs)
  // FP8 expert GEMMs: Megatron-Core pads each expert's tokens to a multiple of this (16;
  // MXFP8 32; NVFP4 128, get_fp4_align_size), as Transformer Engine's FP8 and FP4 grouped
  // GEMMs (and NVFP4's grouped Hadamard quantization) want; 1 otherwise.
  double expert_row_align = 1.0;
  bool qk_norm;    // an RMSNorm on each query and key head
  bool attn_softcap;  // soft-capped attention scores (standard attention: three passes)
  bool attn_sinks;    // a learned sink logit per head (standard attention: three passes)
  bool act_clamp;     // gpt-oss's clamped SwiGLU (eager: a chain of seven kernels)
  int norms;
  // Sliding window: keys a query attends to at most (0 = all) and the share of the layers
  // that window (their attention cost is averaged into the one layer priced).
  double window, window_share;
  LayerLinears linears;  // Q, K, V and gate/up as one linear each or several
  AttentionKernel attention;
  int cp;  // context parallelism: the flash core's steps (s is the rank's s / cp)
  // Mixture of experts (estimator/time/moe.h): f is then the width a token runs through
  // (topk x expert width + shared experts), which the activation kernels see. experts,
  // topk, fe (one expert's width), fs (shared experts' width), ep (expert parallelism) and
  // routed = Ts x topk, the token copies one rank dispatches (and, balanced, receives).
  bool moe;
  double experts, topk, fe, fs, ep, routed;
  double etp;  // expert tensor parallelism: each expert's widths split etp ways, its tokens gathered etp-fold
  bool permute_atomic;  // the permutation adds rows with atomics (OpKey::permute_atomic)
  bool moe_bias;        // the experts' linears carry biases (ModelSpec::moe_bias)
  // Multi-head latent attention (estimator/time/mla.h): hq = hkv = heads x (head_dim +
  // qk_rope_head_dim), the query and key widths; ql, kvl the latent ranks, dr the rotary
  // part. hout is the value and attention-output width, heads x v_head_dim (hq otherwise).
  bool mla;
  double ql, kvl, dr, hout;
};

Dims dims(const ModelSpec& m, const OpKey& k);

// Query/key width per head (with MLA its rotary part too), and the value width per head.
inline double head_dim(const Dims& d) { return d.hq / (d.heads * d.t); }
inline double v_head_dim(const Dims& d) { return d.hout / (d.heads * d.t); }

// Forward (M, N, K) of a layer's linears on one TP rank, by role: QKV (one GEMM, or Q, K
// and V; MLA: its down and up projections, mla.h), projection, FC1 (one GEMM, or the gate
// and up GEMMs), FC2. MoE (moe.h): FC1 and FC2 are the shared experts' (TP-split, if any),
// then the router on the rank's Ts tokens and the local experts' grouped GEMMs, batch
// experts/ep of ep x routed / experts tokens each (expert TP: etp x as many, widths / etp).
enum LayerLinear { kQkv, kProj, kFc1, kFc2, kMoe, kRoles };
struct LinearShape {
  double m, n, k;
  LayerLinear role;
  double batch = 1;
};
std::vector<LinearShape> layer_gemm_shapes(const Dims& d);

// The routed experts' token copies this rank's experts compute (etp x routed, balanced), and
// the output width of one expert's up/gate and down GEMMs together on it (g fe / etp + h).
inline double expert_rows(const Dims& d) { return d.etp * d.routed; }
inline double expert_out_cols(const Dims& d) { return (d.gated ? 2.0 : 1.0) * d.fe / d.etp + d.h; }

}  // namespace dsplan::op
