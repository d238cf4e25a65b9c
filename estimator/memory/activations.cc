// Per-layer activation bytes, term by term (sb = s x b tokens on this micro-batch):
//  replicated (split over t only with SP): 2 LayerNorm inputs (r x sb x h, r = 4 under
//    torch.amp whose residual stream is fp32, else e; sandwich post-norms read 16-bit
//    outputs, LayerShape::norm16_eager), the QKV input and the FC1 input
//    (e x sb x h each; under torch.amp the 16-bit casts the linears save, one per linear
//    when Q, K, V or gate and up are separate linears) + two 1-byte dropout masks
//    (attention output, MLP output).
//  sharded over t: Q (e sb q), K and V (e sb kv each), the attention output feeding the
//    projection (e sb q), and mlp_tensors x e sb f for the MLP (GeLU input and FC2 input).
//  quadratic, sharded over heads: softmax output e b a s^2, dropout mask 1 b a s^2 and
//    dropout output e b a s^2. Under torch.amp the softmax runs in fp32 (4 B) and the
//    probabilities are cast to 16 bits (2 B) for the AV matmul, the fp32 dropout output
//    being freed. Selective recomputation and FlashAttention drop these; FlashAttention
//    saves a 4-byte logsumexp per row and head instead.
// MoE: f is topk x the expert width (+ shared experts), and see the MoE term below.
// Megatron's recompute modules free, per layer: mla_up_proj Q, K and V; moe_act the routed
// experts' FC2 input; layernorm the separate norms' outputs; mlp a dense layer's MLP
// intermediates and its fused norm's output; shared_experts their intermediates; moe the
// routed and shared experts' intermediates, the token copies and the router's tensors.
// MLA: Q, K and V at their widths (qk_head_dim, v_head_dim), the output at v_head_dim, and
// the latents e sb (2 (q_lora_rank + kv_lora_rank) + qk_rope_head_dim), split with SP.
// With e = 2, q = kv = h, f = 4h, dropout: 10 sbh + 24 sbh/t + 5 a s^2 b / t (Korthikanti).
// FP8 linears (Transformer Engine) save the inputs of QKV, FC1, the projection and FC2 as
// 1-byte FP8 (the transposed copy their weight-gradient GEMM reads) instead of e bytes.
// The norm inputs, Q, K, V and the activation input keep e.
#include "estimator/memory/activations.h"

#include <algorithm>

#include "core/train_config.h"

namespace dsplan {

LayerActivation layer_activation(const LayerShape& x) {
  const double sb = x.s * x.b;
  LayerActivation a;
  const double masks = x.dropout ? 2 * sb * x.h : 0;
  // Norm inputs: the pre-norms read the residual stream, the post-norms 16-bit outputs.
  const double n16 = x.norm16_eager ? 8 : x.e;  // saved per element by a 16-bit-input norm
  const double post = x.norms == 4 ? 2 : 0;
  const double norms = ((x.norms - post) * x.residual_bytes() + post * n16) * sb * x.h;
  // QKV and FC1 inputs: the pre-norm outputs (one shared tensor when one norm feeds both;
  // sandwich post-norm outputs go to the residual adds, which save nothing).
  const double li = x.fp8 ? (x.nvfp4 ? kNvfp4Bytes : 1.0) : x.e;  // bytes per saved linear-input element
  const double linear_inputs = std::min(x.norms, 2.0) + x.input_copies;
  a.replicated = (norms + linear_inputs * li * sb * x.h + masks) / (x.sp ? x.t : 1);
  const double out = x.out > 0 ? x.out : x.q;  // the projection's input
  const double qkv = x.e * sb * (x.q + 2 * x.kv) / x.t;
  const double per_f = x.e * (x.mlp_tensors - 1) + li;  // bytes per MLP intermediate element
  a.sharded = qkv + (li * sb * out + per_f * sb * x.f) / x.t;
  a.replicated += x.e * sb * x.latent / (x.sp ? x.t : 1);                // MLA's latents
  if (x.eager_rotary) a.sharded += x.e * sb * (x.q + x.kv) / x.t;        // pre-rotation Q, K
  // MoE, on the rank's sequence-parallel slice of tokens (expert TP 1): the permuted
  // token copies (the experts' FC1 input, gathered etp-fold; in FP8 the grouped linear keeps
  // its 1-byte cast, li, as every FP8 linear does), the expert outputs where the combine
  // saves them (moe_saves_outputs, e h), the router's fp32 probabilities (4 per expert) and
  // the top-k indices and weights (8 + 4 per copy).
  const double copy = (x.moe_gathered * li + (x.moe_saves_outputs ? x.e : 0.0)) * x.h + 12;
  const double moe = x.moe_copies > 0 ? sb / x.t * (x.moe_copies * copy + 4 * x.experts) : 0;
  a.sharded += moe;
  // Selective recompute modules (Megatron-Core): what each frees.
  const double slice = sb * x.h / (x.sp ? x.t : 1);  // one hidden-wide tensor of the layer
  double freed_sharded = 0, freed_replicated = 0;
  if (x.rc_mla_up_proj) freed_sharded += qkv;
  if (x.rc_mlp) {  // the dense MLP keeps only its input: the fused norm's output goes too
    freed_sharded += per_f * sb * std::max(0.0, x.f - x.f_routed - x.f_shared) / x.t;
    freed_replicated += x.dense_share * li * slice;
  }
  if (x.rc_moe) {
    freed_sharded += per_f * sb * (x.f_routed + x.f_shared) / x.t + moe;
  } else {
    if (x.rc_shared) freed_sharded += per_f * sb * x.f_shared / x.t;
    if (x.rc_moe_act) freed_sharded += li * sb * x.f_routed / x.t;
  }
  if (x.rc_layernorm) freed_replicated += x.separate_norms * li * slice;
  a.sharded -= freed_sharded;
  a.replicated -= freed_replicated;
  a.recomputed = freed_sharded + freed_replicated;
  if (x.qk_norm) a.sharded += n16 * sb * (x.q + x.kv) / x.t;             // pre-norm Q, K
  if (x.repeat_kv && x.kv < x.q) a.sharded += 2 * x.e * sb * (x.q - x.kv) / x.t;  // repeat_kv
  const double s2 = x.b * x.heads * x.s * x.s / x.t;
  if (x.flash) {
    a.flash_lse = 4 * x.b * x.heads * x.s / x.t;
  } else if (!x.selective) {
    double per = 0;
    if (x.amp_softmax) {
      per = 4 + 2 + (x.dropout ? 1 : 0);
    } else {
      per = x.e + (x.dropout ? 1 + x.e : 0);
    }
    if (x.attn_softcap) per += x.e;
    a.quadratic = per * s2;
  }
  return a;
}

double layer_backward_transient(const LayerShape& x) {
  const double sb = x.s * x.b;
  const double attn = x.flash ? 0 : 2 * x.e * x.b * x.heads * x.s * x.s / x.t;
  const double mlp = 2 * x.e * sb * x.f / x.t;
  return std::max(attn, mlp) + 2 * x.residual_bytes() * sb * x.h / (x.sp ? x.t : 1);
}

double layer_checkpoint_bytes(const LayerShape& x) {
  return x.residual_bytes() * x.s * x.b * x.h / (x.sp ? x.t : 1);
}

double loss_bytes_per_logit(const LayerShape& x, bool vocab_parallel_inplace) {
  if (x.fused_loss) return x.e;
  if (vocab_parallel_inplace) return x.e == 2 ? 2 + 4 : 4;
  return 3 * (x.fp32_loss || x.fp32_residual ? 4.0 : x.e);  // activations.h
}

}  // namespace dsplan
