// Memory-bound work of a layer by kernel class, and its time (elementwise.h).
#include "estimator/time/elementwise.h"

#include <algorithm>
#include <cmath>

namespace dsplan {

double MemWork::total_bytes() const {
  double s = 0;
  for (double b : bytes) s += b;
  return s;
}

Seconds mem_seconds(MemKernel k, double bytes, double elems, const GpuSpec& gpu, const Efficiency& eff) {
  if (bytes <= 0 && elems <= 0) return Seconds{};
  if (eff.stream_hbm_fraction <= 0 || k == MemKernel::blended)
    return Seconds(bytes / (gpu.hbm_bw.v * eff.hbm_fraction));
  const double ts = bytes / (gpu.hbm_bw.v * eff.stream_hbm_fraction);
  const double cap = eff.issue_elems_per_sm_clk[static_cast<std::size_t>(k)];
  const double issue = cap * std::max(1, gpu.sm_count) * gpu.boost_clock_MHz * 1e6;
  if (cap <= 0 || issue <= 0) return Seconds(ts);
  const double ti = elems / issue;
  return Seconds(std::cbrt(ts * ts * ts + ti * ti * ti));
}

Seconds mem_seconds(const MemWork& w, const GpuSpec& gpu, const Efficiency& eff) {
  Seconds t{};
  for (std::size_t c = 0; c < kMemKernels; ++c)
    t += mem_seconds(static_cast<MemKernel>(c), w.bytes[c], w.elems[c], gpu, eff);
  return t;
}

// The passes over the s x s scores of all local heads: scale and mask (fused into the
// softmax by Megatron), softmax, dropout (1-byte mask). Each backward moves twice its
// forward's bytes; softmax's backward is its own class, the others keep their forward's
// (a masked gradient is a where, the rest stream).
// Under torch autocast the kernels are those the reference workload's kernel profile lists
// (session 27, H100 and H200, docs/accuracy.md): scale (2e) and mask (2e) in 16 bits; the
// upcast to fp32 for the softmax (e + 4), a dtype conversion that runs TensorIterator's
// non-vectorised path (the mask class); softmax (8), dropout (9) and the downcast for the
// P V GEMM (4 + e). Backward, one kernel each: the upcast of dP (e + 4, mask class), the
// dropout's masked scale (9), the fp32 softmax backward (12: a warp kernel that streams)
// and one more fp32 product over the scores beside it (12, seen in every profile), the
// downcast (4 + e), the mask's where (2e) and the scale (2e). masked_fill, as the workload
// writes the mask, also clones the scores each way (2e + 2e); Hugging Face's where or
// additive masks do not, and the clone is not priced.
Elementwise score_elementwise(const op::Dims& d) {
  const double sc = d.b * d.heads * d.s * d.s;
  Elementwise w;
  auto pass = [&](MemKernel f, MemKernel b, double bytes) {
    w.fwd.add(f, bytes, sc), w.bwd.add(b, 2.0 * bytes, sc);
    w.fwd.kernels += 1, w.bwd.kernels += 2;
  };
  auto fwd = [&](MemKernel k, double bytes) { w.fwd.add(k, bytes, sc), w.fwd.kernels += 1; };
  auto bwd = [&](MemKernel k, double bytes) { w.bwd.add(k, bytes, sc), w.bwd.kernels += 1; };
  // Three passes each over the 16-bit scores: Gemma 2's soft-cap, cap * tanh(scores / cap)
  // (divide, tanh, multiply), and gpt-oss's sinks as its eager attention (and Megatron-Core's
  // unfused learnable softmax) write them: the sink column concatenated to the scores, the
  // row maximum subtracted, the scores sliced back out of the softmax for P V. Their
  // gradients mirror them.
  const int extra_passes = 3 * ((d.attn_softcap ? 1 : 0) + (d.attn_sinks ? 1 : 0));
  if (d.autocast) {
    const double e = d.e, f = 4.0;         // 16-bit scores, fp32 softmax
    fwd(MemKernel::stream, sc * 2.0 * e);  // scale
    fwd(MemKernel::mask, sc * 2.0 * e);    // causal or padding mask
    for (int i = 0; i < extra_passes; ++i) pass(MemKernel::stream, MemKernel::stream, sc * 2.0 * e);
    fwd(MemKernel::mask, sc * (e + f));  // upcast
    fwd(MemKernel::softmax_fwd, sc * 2.0 * f);
    if (d.dropout) fwd(MemKernel::dropout_fwd, sc * (2.0 * f + 1.0));
    fwd(MemKernel::stream, sc * (f + e));  // downcast
    bwd(MemKernel::mask, sc * (e + f));    // upcast of dP
    if (d.dropout) bwd(MemKernel::stream, sc * (2.0 * f + 1.0));
    bwd(MemKernel::stream, sc * 3.0 * f);  // softmax backward
    bwd(MemKernel::stream, sc * 3.0 * f);  // the fp32 product beside it
    bwd(MemKernel::stream, sc * (f + e));  // downcast
    bwd(MemKernel::mask, sc * 2.0 * e);
    bwd(MemKernel::stream, sc * 2.0 * e);
    return w;
  }
  if (!d.fused_elementwise) {
    pass(MemKernel::stream, MemKernel::stream, sc * 2.0 * d.e);  // scale
    pass(MemKernel::mask, MemKernel::mask, sc * 2.0 * d.e);      // causal or padding mask
  }
  for (int i = 0; i < extra_passes; ++i) pass(MemKernel::stream, MemKernel::stream, sc * 2.0 * d.e);
  pass(MemKernel::softmax_fwd, MemKernel::softmax_bwd, sc * (d.e + d.ew));
  if (d.dropout) pass(MemKernel::dropout_fwd, MemKernel::stream, sc * (2.0 * d.ew + 1.0));
  return w;
}

// Fused kernels (Megatron: Transformer Engine / Apex) read and write each tensor once. The
// other frameworks run the PyTorch model code of Hugging Face, torchtitan or IBM FMS, whose
// rotary embedding and SwiGLU are eager chains of ops (docs/model.md §4, "Elementwise");
// RMSNorm is eager or fused as TrainConfig::norm_kernel says (torch.nn.RMSNorm is one
// kernel from PyTorch 2.9 where its input has its weight's dtype: NormKernel::torch).
// Bytes per element, with e the activation element size:
//  - RMSNorm, eager: eager_rmsnorm() below. Fused: 2e and 4e.
//  - rotary on the local q and k heads, eager: float, complex multiply, type_as: 2e + 16
//    each way (bf16: 20). Fused: 2e each way.
//  - SwiGLU, eager: silu (2e) then multiply (3e) = 5e forward; backward 9e. Fused: 3e, 6e.
// Hugging Face's LlamaRMSNorm as eager ops over n elements of size c (4: the fp32 residual
// under autocast; 2: 16-bit), count times, in the kernels the session-27 profile of the
// chain lists (Llama 3.2 1B on an H200, docs/accuracy.md). Products against the row's
// rsqrt or the weight broadcast a [rows, 1] or [h] tensor, and a conversion to fp32 runs
// TensorIterator's non-vectorised path: the mask class, one element each. The rest stream.
//  forward: [upcast c + 4] pow 8, mean 4, x * rsqrt 8 (mask), [downcast 4 + c],
//    weight * x 2c (mask): 28 + 4c bytes with casts (36 in bf16), 20 + 2c without (28);
//  backward: grad * weight 2c (mask); the weight's gradient, grad * x 3c and its column sum
//    c; [upcast c + 4 (mask)]; grad * rsqrt 8 (mask); grad * x 12 and its row sum 4; the
//    mean's expanded gradient 4 (mask); pow's 2x 8 and product 12; the two paths' sum 12;
//    a gradient copy 8; [downcast 4 + c]: 68 + 6c + casts (92 in bf16 and in fp32).
// The profile's chain took 2.2x the fused kernel's time a step; the 6e + 52 bytes priced
// before session 27 (one backward pass per forward op) gave half of that.
void eager_rmsnorm(Elementwise& w, double n, double c, int count) {
  const bool cast = c < 4.0;
  const double up = cast ? c + 4.0 : 0.0, down = cast ? 4.0 + c : 0.0;
  w.fwd.add(MemKernel::mask, n * (8.0 + 2.0 * c + up), n * (cast ? 3.0 : 2.0));
  w.fwd.add(MemKernel::stream, n * (12.0 + down), n * (cast ? 3.0 : 2.0));
  w.bwd.add(MemKernel::mask, n * (2.0 * c + 8.0 + 4.0 + up), n * (cast ? 4.0 : 3.0));
  w.bwd.add(MemKernel::stream, n * (4.0 * c + 16.0 + 20.0 + 12.0 + 8.0 + down), n * (cast ? 8.0 : 7.0));
  w.fwd.kernels += count * (cast ? 6 : 4), w.bwd.kernels += count * (cast ? 14 : 12);
}

// `count` norms over n elements of size c in all: the eager RMSNorm chain, or one fused
// kernel forward (2c) and two backward (4c: the input's gradient, the weight's reduction).
void norm_passes(Elementwise& w, double n, double c, int count, bool eager) {
  if (eager) return eager_rmsnorm(w, n, c, count);
  w.fwd.add(MemKernel::blended, n * 2.0 * c, 0);
  w.bwd.add(MemKernel::blended, n * 4.0 * c, 0);
  w.fwd.kernels += count, w.bwd.kernels += 2 * count;
}

// The MLP activation over `ffn` elements of the intermediate (per rank: T f / t).
Elementwise activation_elementwise(const op::Dims& d, double ffn) {
  Elementwise w;
  const bool eager = !d.megatron;
  const bool swiglu_eager = d.gated && eager && !d.act_unfused;
  if (d.act_clamp && eager) {
    // gpt-oss's clamped SwiGLU as transformers writes it: clamp the gate (r 1, w 1) and the
    // up half (r 1, w 1), gate x 1.702 (r 1, w 1), its sigmoid (r 1, w 1), gate x sigmoid
    // (r 2, w 1), up + 1 (r 1, w 1), the product (r 2, w 1): 16 e bytes per element of the
    // intermediate in 7 kernels. Backward: the product's and gate x sigmoid's two gradients
    // (r 3, w 2 each), sigmoid's (r 2, w 1), the scale's (r 1, w 1), the clamps' masked
    // gradients (r 2, w 1 each) and the gate's two gradients summed (r 2, w 1): 24 e in 8.
    w.fwd.add(MemKernel::stream, ffn * 16.0 * d.e, 7 * ffn);
    w.bwd.add(MemKernel::stream, ffn * 24.0 * d.e, 8 * ffn);
    w.fwd.kernels += 7, w.bwd.kernels += 8;
  } else if (d.act_unfused) {
    // Under autocast torch.pow runs in fp32, so gelu_new's chain from there on is fp32: an
    // upcast (r 2, w 4), pow, two scalar muls, tanh and +1 (r 4, w 4 each), x + 0.044715x^3
    // (r 2 + 4, w 4), 0.5x (r 2, w 2), the product (r 2 + 4, w 4) and the cast down for FC2
    // (r 4, w 2): 76 bytes per element in 10 kernels. Each is one or two arithmetic
    // operations per element: they stream.
    const double act = ffn * (d.autocast ? 76.0 : 18.0 * d.e);
    const int k = d.autocast ? 10 : 8;
    w.fwd.add(MemKernel::stream, act, k * ffn);
    w.bwd.add(MemKernel::stream, 2.0 * act, 2 * k * ffn);
    w.fwd.kernels += k, w.bwd.kernels += 2 * k;
  } else if (swiglu_eager) {
    // silu, then the product: contiguous, one or two operations an element; they stream
    // (measured at 0.87-0.90 of HBM on an H100 and an H200, forward and backward).
    w.fwd.add(MemKernel::stream, ffn * 5.0 * d.e, 2 * ffn);
    w.bwd.add(MemKernel::stream, ffn * 9.0 * d.e, 4 * ffn);
    w.fwd.kernels += 2, w.bwd.kernels += 4;
  } else if (d.gated) {
    // Megatron's fused SwiGLU (read gate and up, write the product) and its backward were
    // not measured: blended.
    const double act = ffn * 3.0 * d.e;
    w.fwd.add(MemKernel::blended, act, 0);
    w.bwd.add(MemKernel::blended, 2.0 * act, 0);
    w.fwd.kernels += 1, w.bwd.kernels += 2;
  } else {
    // One fused gelu kernel (or Megatron's bias-gelu), the measured gelu class. Its
    // backward reads the gradient and the input and writes the input's gradient (3e an
    // element, the bias's few bytes aside) with a tanh's arithmetic per element: it
    // streams (measured at 0.83-0.89 of HBM on an H200 and an H100).
    w.fwd.add(MemKernel::gelu, ffn * 2.0 * d.e, ffn);
    w.bwd.add(MemKernel::stream, ffn * 3.0 * d.e, ffn);
    w.fwd.kernels += 1, w.bwd.kernels += 1;
  }
  return w;
}

Elementwise layer_elementwise(const op::Dims& d) {
  Elementwise w;
  const double x = d.Ts * d.h, ew = d.ew;
  const bool eager = !d.megatron;
  // Pre-norms read the residual stream (fp32 under autocast). Sandwich post-norms (4 norms
  // a layer) and the query/key-head norms (Qwen3, Gemma 3) read 16-bit sublayer outputs
  // and write 16 bits, whichever kernel runs them.
  const int post = d.norms == 4 ? 2 : 0;
  norm_passes(w, (d.norms - post) * x, ew, d.norms - post, d.rms && !d.norm_fused);
  if (post > 0) norm_passes(w, post * x, d.e, post, d.rms && !d.norm16_fused);
  if (d.qk_norm) norm_passes(w, d.T * (d.hq + d.hkv) / d.t, d.e, 2, !d.norm16_fused);
  // Twice a layer: Megatron's fused bias-dropout-add reads 2, writes 1 (+ the mask);
  // otherwise dropout (r 1, w 1 + mask) and the residual add (r 2, w 1) are separate
  // kernels. The random numbers make a dropout forward its own class; every backward
  // (mask multiply, gradient copy) streams. Each backward moves twice its forward.
  if (d.fused_elementwise) {
    const MemKernel k = d.dropout ? MemKernel::dropout_fwd : MemKernel::stream;
    const double bda = 2 * x * (3.0 * ew + (d.dropout ? 1.0 : 0.0));
    w.fwd.add(k, bda, 2 * x);
    w.bwd.add(MemKernel::stream, 2 * bda, 2 * x);
    w.fwd.kernels += 2, w.bwd.kernels += 4;
  } else {
    if (d.dropout) {
      w.fwd.add(MemKernel::dropout_fwd, 2 * x * (2.0 * ew + 1.0), 2 * x);
      w.bwd.add(MemKernel::stream, 4 * x * (2.0 * ew + 1.0), 2 * x);
      w.fwd.kernels += 2, w.bwd.kernels += 4;
    }
    w.fwd.add(MemKernel::stream, 2 * x * 3.0 * ew, 2 * x);
    w.bwd.add(MemKernel::stream, 4 * x * 3.0 * ew, 2 * x);
    w.fwd.kernels += 2, w.bwd.kernels += 4;
  }
  const Elementwise act = activation_elementwise(d, d.T * d.f / d.t);
  w.fwd.merge(act.fwd), w.bwd.merge(act.bwd);
  if (d.rope) {
    // Eager rotary runs on half-width slices of q and k against a broadcast cos/sin table:
    // TensorIterator's non-vectorised path, whose per-element index arithmetic limits it as
    // it does the masked where (the mask class). The reference workload's chain writes 4
    // elements per element of q and k forward (four half-width products, their difference
    // and sum, the concatenation) and about 6 backward (the products' gradients, their sums,
    // the slices' zero-filled gradients): 2e + 16 bytes each way, as priced before. The
    // census of the workload (scripts/aten_census.py) counts 7 kernels a tensor forward
    // and 8 backward (four products, a negation, three sums).
    const double n = d.T * (d.hq + d.hkv) / d.t;
    const double rope = n * (eager ? 2.0 * d.e + 16.0 : 2.0 * d.e);
    w.fwd.add(eager ? MemKernel::mask : MemKernel::blended, rope, eager ? 4.0 * n : 0.0);
    w.bwd.add(eager ? MemKernel::mask : MemKernel::blended, rope, eager ? 6.0 * n : 0.0);
    w.fwd.kernels += eager ? 14 : 1, w.bwd.kernels += eager ? 16 : 1;
  }
  if (eager) {
    // Eager model code's attention layouts, as the census of the reference workload lists
    // them (strided copies, the mask class's non-vectorised path; e bytes read and written
    // an element):
    //  - backward, the q, k and v gradients go from the attention's [b, heads, s, d] back to
    //    the linears' [b, s, heads d]: one copy each, or one concatenation into a fused QKV
    //    linear's gradient; standard attention copies more: GPT-2's (fused QKV) the three
    //    gradients once more, BERT's (separate Q, K, V; Hugging Face's eager attention) the
    //    output's gradient;
    //  - forward, standard attention copies q, k^T and v for its batched GEMMs and its
    //    output back to [b, s, heads d]. Flash attention writes its output in q's memory
    //    layout: the copy back happens only where the eager rotary wrote q per head
    //    (the workload's concatenation; Hugging Face's rotary keeps q strided, no copy);
    //  - grouped K and V repeated to every head (the memory model's repeat_kv): two copies
    //    forward and two sums over the groups backward.
    const double q = d.T * d.hq / d.t, kv = d.T * d.hkv / d.t, qkv = q + 2.0 * kv;
    const bool standard = !d.flash, fused = d.linears.qkv == 1;
    auto copy = [&](MemWork& pass, double elems, int kernels) {
      pass.add(MemKernel::mask, 2.0 * d.e * elems, elems), pass.kernels += kernels;
    };
    copy(w.bwd, qkv, fused ? 1 : 3);
    if (standard) {
      copy(w.bwd, fused ? qkv : q, fused ? 3 : 1);
      copy(w.fwd, qkv, 3);
    }
    if (standard || d.rope) copy(w.fwd, q, 1);
    if (kv < q) {
      w.fwd.add(MemKernel::mask, 2.0 * d.e * (q + kv), 2.0 * q);
      w.bwd.add(MemKernel::stream, 2.0 * d.e * (q + kv), 2.0 * q);
      w.fwd.kernels += 2, w.bwd.kernels += 2;
    }
  }
  // The QKV and FC1 inputs feed one linear each, or several (separate Q, K, V and gate, up):
  // autograd sums the linears' input gradients, one add (r 2, w 1) per extra consumer.
  // Under autocast every linear casts its fp32 input to 16 bits itself (activations are
  // not cached), and back in backward.
  const int consumers = d.linears.qkv + d.linears.up_gate;
  const double tokens = d.T * d.h;
  if (d.autocast) {
    w.fwd.add(MemKernel::stream, consumers * tokens * (ew + d.e), consumers * tokens);
    w.bwd.add(MemKernel::stream, 2 * consumers * tokens * (ew + d.e), 2 * consumers * tokens);
    w.fwd.kernels += consumers, w.bwd.kernels += 2 * consumers;
  } else if (consumers > 2) {
    w.bwd.add(MemKernel::stream, (consumers - 2) * tokens * 3.0 * d.e, (consumers - 2) * tokens);
    w.bwd.kernels += consumers - 2;
  }
  return w;
}

}  // namespace dsplan
