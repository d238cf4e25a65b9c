// Kernel-level decomposition of a training step's compute (docs/model.md §4 Step time,
// "Operator costs"). Notation: b micro-batch, s sequence, h hidden, t TP degree,
// T = b s tokens, Ts = T/t with sequence parallelism (norms, dropout and residual adds
// run on a 1/t slice) and T otherwise, e bytes per activation element.
// Assumptions:
//  - Megatron fuses scale+mask+softmax and bias+dropout+add; Hugging Face-style models
//    (every other framework) run scale, mask and softmax as three kernels and dropout and
//    residual add as two. A model without dropout (ModelSpec::dropout) runs no dropout
//    kernels and writes no masks (residual, attention-probability, embedding).
//  - An elementwise kernel's backward moves twice its forward bytes (reads the upstream
//    gradient and a saved input, writes the input gradient; norms and softmax re-read).
//  - FlashAttention: forward 4 b s^2 (a/t) d FLOPs, causal runs only the blocks on or
//    below the diagonal ((n+1)/(2n) of n x n 128-wide blocks); backward 2.5x forward;
//    it sustains flash_relative(arch, kernel) of the GEMM efficiency (FA2: ~64% of A100
//    peak, ~35% of H100; cuDNN on Hopper ~56%, FA3 ~61%), causal 0.9 of that, backward
//    0.85 of that, all at 2048 tokens, scaled for other lengths by the share of a row's
//    time spent on its blocks (sequence_scaling); the K/V re-reads of each query block come
//    from L2 while they fit.
//    flash-attn's Triton kernel runs at FA2's rate / 1.4 forward and / 2 backward.
//    fp32 has no flash kernel: standard attention.
//  - An unfused activation (ModelSpec::activation_unfused, HF GPT-2's gelu_new) runs 8
//    elementwise kernels forward: pow, mul, add, mul, tanh, add, mul (1 tensor in, 1 out)
//    and the final mul (2 in, 1 out): 18 passes over the T x f/t tensor instead of 2.
//    Under autocast pow promotes the chain to fp32 (76 bytes per element, 10 kernels; see
//    act below), as dsplan's H100 profile of its reference workload shows.
//  - torch autocast (framework ddp, 16-bit): GEMMs run in 16-bit but norms, softmax and the
//    residual stream come out in fp32 (type promotion), so elementwise tensors are 4-byte,
//    the QKV and FC1 inputs and the attention probabilities are cast down (r 4 B, w 2 B),
//    and every weight is cast once per forward (6 B/param).
//  - FP8 linears: GEMMs at the FP8 rate, plus the casts of fp8.h.
#include "estimator/time/operators.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "estimator/params.h"
#include "estimator/time/elementwise.h"
#include "estimator/time/fp8.h"
#include "estimator/time/gemm.h"
#include "estimator/time/mla.h"
#include "estimator/time/moe.h"
#include "estimator/time/op_acc.h"
#include "estimator/time/op_dims.h"
#include "estimator/time/recompute_modules.h"

namespace dsplan {

namespace {

using op::Acc;
using op::Dims;
using op::dims;
using op::head_dim;
using op::host_time;
using op::kFc1;
using op::kQkv;
using op::kRoles;
using op::layer_gemm_shapes;
using op::LinearShape;
using op::v_head_dim;

// Every head of the per-head attention GEMMs starts misaligned (GemmShape::heads_misaligned).
bool heads_misaligned(const Dims& d) { return std::fmod(head_dim(d), 8.0) != 0.0; }

// FlashAttention's rate relative to the GEMM rate. auto: Megatron on Hopper runs Transformer
// Engine, which prefers cuDNN's fused attention there over FlashAttention-2 ("to give
// FusedAttention preference on Hopper+ for performance reasons"); the other frameworks run
// PyTorch SDPA's FA2. On an H100 (FlashAttention-3 paper, Fig. 5, bf16, head dim 128,
// sequence 2k-16k) cuDNN runs at 1.6-1.7x FA2 and FA3 at 1.73-1.81x: 0.8 and 0.875 against
// FA2's 0.5. Before Hopper there is no FA3 and no published cuDNN advantage: FA2's rate.
// Blackwell takes Hopper's cuDNN and FA2 shares, unmeasured (FA3 is Hopper-only; the
// options refuse it elsewhere): docs/model.md §2 "B200".
// The kernel that runs: auto's choice, and FA2's class before Hopper whatever was pinned.
AttentionKernel running_kernel(GpuArch a, bool megatron, AttentionKernel kernel) {
  if (kernel == AttentionKernel::auto_)
    kernel = hopper_or_newer(a) && megatron ? AttentionKernel::cudnn : AttentionKernel::fa2;
  if (!hopper_or_newer(a) && kernel != AttentionKernel::triton) kernel = AttentionKernel::fa2;
  return kernel;
}

double flash_relative(GpuArch a, AttentionKernel kernel) {
  switch (a) {
    case GpuArch::volta: return 0.6;
    case GpuArch::ampere: return 0.8;
    case GpuArch::hopper:
    case GpuArch::blackwell:
      return kernel == AttentionKernel::fa3 ? 0.875 : kernel == AttentionKernel::cudnn ? 0.8 : 0.5;
  }
  return 0.8;
}

// flash-attn's Triton kernel (flash_attn_triton.py, 2022; what llm-foundry's attn_impl
// triton and Megatron-DeepSpeed's --use-flash-attn-triton run) against FlashAttention-2 on
// an A100 (FlashAttention-2 paper, §4.1): FA2 is 1.3-1.5x faster forward and about 2x faster
// backward. Taken at 1.4 and 2 on every GPU: the kernel was only tested on A100.
constexpr double kTritonFwdSlowdown = 1.4;
constexpr double kTritonBwdSlowdown = 2.0;

// Share of the n x n 128-wide score blocks a flash kernel runs. Causal: the n(n+1)/2 on or
// below the diagonal. With a sliding window of w keys, query block q needs the key blocks
// from floor((128q - w + 1)/128) to q: min(q, m) + 1 of them, m = ceil((w - 1)/128), so
// n + m(m-1)/2 + (n-m)m blocks in all when m < n (n(n+1)/2 otherwise). The layers without
// the window (1 - window_share of them) run the causal share; the result is the average.
double causal_fraction(const Dims& d) {
  if (!d.causal) return 1.0;
  const double n = std::ceil(d.s / 128.0);
  const double full = (n + 1.0) / (2.0 * n);
  if (d.window <= 0 || d.window_share <= 0) return full;
  const double m = std::ceil((d.window - 1.0) / 128.0);
  const double windowed = m >= n ? full : (n + m * (m - 1.0) / 2.0 + (n - m) * m) / (n * n);
  return d.window_share * windowed + (1.0 - d.window_share) * full;
}

// HBM bytes of one FlashAttention forward. Each 128-row query block streams all of its
// head's K and V (the causal part only): e·b·a·s·d·(2 + 2·c·⌈s/128⌉) bytes leave L2
// (reference §4). They reach HBM only when the K/V of the heads in flight at once (the
// SMs spread over ⌈s/128⌉ query blocks per head) overflow L2; otherwise HBM sees Q, K,
// V and O once. The backward moves twice this.
double flash_fwd_hbm_bytes(const Dims& d, const GpuSpec& gpu) {
  const double hd = 0.5 * (head_dim(d) + v_head_dim(d)), bh = d.b * d.heads;  // K's and V's mean
  const double blocks = std::ceil(d.s / 128.0);
  const double heads_in_flight = std::min(bh, std::ceil(std::max(1, gpu.sm_count) / blocks));
  const bool kv_in_l2 = 2.0 * d.s * hd * d.e * heads_in_flight <= gpu.l2.v;
  const double c = d.causal ? causal_fraction(d) : 1.0;
  return d.e * bh * d.s * hd * (kv_in_l2 ? 4.0 : 2.0 + 2.0 * c * blocks);
}

// A causal kernel runs the diagonal blocks masked and its work is uneven across blocks:
// FlashAttention-3 paper, Fig. 5 (H100, head dim 128, 2k-16k): counting the executed
// blocks, FA2 and cuDNN run causal at 0.87-0.89 of their non-causal rate, FA3 at 0.93.
constexpr double kCausalRate = 0.9;

// The rates above are the kernels' at a 2048-token sequence. Each row of 128-wide blocks
// (a query block forward, a key block backward) also pays work that does not grow with the
// row: loading its own block, rescaling and writing the output forward; writing dK and dV
// and accumulating dQ backward. Taken as c blocks' worth per row, a head's kernel time goes
// as E + c·n for E executed blocks in n rows, so the rate scales with E/(E + c·n) against
// its value at n = 16 (2048 tokens, causal or not). c is read off the FlashAttention-3
// paper's H100 curves (Figs. 5-6, head dim 128, 2k-16k): forward 0.6 for FA2 and cuDNN
// (the causal rate rises 12% and 11% from 2k to 16k), 1 for FA3 (18%); backward 2 for all
// three (non-causal, +9-11% from 2k to 8k). The Triton kernel takes FA2's. docs/model.md §4.
constexpr double kReferenceRows = 16.0;

double row_blocks(AttentionKernel kernel, bool backward) {
  if (backward) return 2.0;
  return kernel == AttentionKernel::fa3 ? 1.0 : 0.6;
}

double row_occupancy(double executed, double rows, double c) { return executed / (executed + c * rows); }

double sequence_scaling(const Dims& d, AttentionKernel kernel, bool backward) {
  const double c = row_blocks(kernel, backward);
  const double n = std::max(1.0, std::ceil(d.s / 128.0)), r = kReferenceRows;
  const double reference = d.causal ? r * (r + 1.0) / 2.0 : r * r;
  return row_occupancy(causal_fraction(d) * n * n, n, c) / row_occupancy(reference, r, c);
}

// Rate of the flash kernel as a fraction of the tensor peak; the backward runs at 0.85 of
// the forward's rate (FA2), the Triton kernel's at half its forward's.
double flash_fraction(const Acc& a, const Dims& d, bool backward) {
  const double gemm = a.eff.gemm_peak_fraction[std::size_t(a.p)];
  const bool triton = d.attention == AttentionKernel::triton;
  const double pass = backward ? 0.85 / (triton ? kTritonBwdSlowdown : 1.0) : 1.0 / (triton ? kTritonFwdSlowdown : 1.0);
  const AttentionKernel kernel = running_kernel(a.gpu.arch, d.megatron, d.attention);
  return gemm * flash_relative(a.gpu.arch, kernel) * (d.causal ? kCausalRate : 1.0) * pass *
         sequence_scaling(d, kernel, backward);
}

// A soft-capped score inside a flash kernel (flash-attn's softcap) costs one tanh, an
// instruction of the special-function units, which also run the softmax's exponentials:
// 16 per SM per clock on Volta to Hopper (CUDA C++ Programming Guide, arithmetic
// instruction throughput). On Hopper those units already take about half the matmul's time
// at head dimension 128 (FlashAttention-3 paper, §3), so the tanh is priced in series: one
// per score computed, forward and again in the backward, which recomputes the scores.
// FlexAttention's score_mod, which computes the precise tanh, measured 2.0x the uncapped
// kernel on an H200 (session 27): this is the cheaper, fast-tanh case.
Seconds softcap_sfu_time(const Dims& d, const GpuSpec& gpu) {
  if (!d.attn_softcap) return Seconds{};
  constexpr double kSfuPerSmClk = 16.0;
  const double scores = d.b * d.heads * d.s * d.s * causal_fraction(d);
  return Seconds(scores / (kSfuPerSmClk * std::max(1, gpu.sm_count) * gpu.boost_clock_MHz * 1e6));
}

// Under context parallelism (d.cp > 1, d.s the rank's s / cp) the flash core runs d.cp
// steps, one kernel each, over as many (s / cp)^2 blocks of score work: 1/cp of the whole
// sequence's (context_parallel.h).
void attention_core_fwd(Acc& a, const Dims& d) {
  const double hd = head_dim(d), dv = v_head_dim(d), bh = d.b * d.heads;
  if (d.flash) {
    const double fl = 2.0 * bh * d.s * d.s * (hd + dv) * causal_fraction(d);
    for (int step = 0; step < d.cp; ++step) {
      a.flops_kernel(fl, flash_fraction(a, d, false), flash_fwd_hbm_bytes(d, a.gpu));
      a.t += softcap_sfu_time(d, a.gpu);
    }
    return;
  }
  const bool odd = heads_misaligned(d);
  a.gemm(d.s, d.s, hd, bh, odd);  // Q K^T
  a.mem(score_elementwise(d).fwd);
  a.gemm(d.s, dv, d.s, bh, odd);  // P V
}

void attention_core_bwd(Acc& a, const Dims& d) {
  const double hd = head_dim(d), dv = v_head_dim(d), bh = d.b * d.heads;
  if (d.flash) {
    const double fl = 5.0 * bh * d.s * d.s * (hd + dv) * causal_fraction(d);
    for (int step = 0; step < d.cp; ++step) {
      a.flops_kernel(fl, flash_fraction(a, d, true), 2.0 * flash_fwd_hbm_bytes(d, a.gpu));
      a.t += softcap_sfu_time(d, a.gpu);
    }
    return;
  }
  const bool odd = heads_misaligned(d);
  a.gemm_bwd(d.s, dv, d.s, bh, odd);  // P V
  a.mem(score_elementwise(d).bwd);
  a.gemm_bwd(d.s, d.s, hd, bh, odd);  // Q K^T
}

// The forward GEMMs of a layer, or their backward: each linear's data-gradient GEMM, then its
// weight-gradient GEMM, whose times are summed into `wgrad` (indexed by role) when given.
void layer_gemms(Acc& a, const Dims& d, bool backward, std::array<Seconds, kRoles>* wgrad = nullptr) {
  a.linear_operands(d.linear_p, d.fp8 && d.mxfp8);
  for (const LinearShape& s : layer_gemm_shapes(d)) {
    if (!backward) {
      a.linear(s.m, s.n, s.k, s.batch);
      continue;
    }
    a.linear_dgrad(s.m, s.n, s.k, s.batch);
    const Seconds before = a.t;
    a.linear_wgrad(s.m, s.n, s.k, s.batch);
    if (wgrad) (*wgrad)[s.role] += a.t - before;
  }
  a.linear_operands(d.gemm_p, false);  // the attention GEMMs after it stay 16-bit
}

// Weights of one layer's linears on one rank: TP-split attention and MLP (MoE: shared
// experts), and the router and the rank's experts/ep whole experts.
double layer_weight_params(const ModelSpec& m, const Dims& d) {
  const ParamCounts c = count_params(m);
  const double rep = tp_replicated_attention(m);
  return (double(c.attention + c.mlp) - rep) / d.t + rep + double(c.router) +
         double(c.experts) / (d.ep * d.etp);
}

void layer_costs(OpCosts& o, const ModelSpec& m, const Dims& d, const OpKey& k, const GpuSpec& gpu,
                 const Efficiency& eff, GemmMemo* memo) {
  const Elementwise w = layer_elementwise(d);
  Acc core{gpu, eff, k.precision, {}, {}, 0, memo, gemm_precision(k)};
  attention_core_fwd(core, d);
  Acc fwd{gpu, eff, k.precision, {}, {}, 0, memo, gemm_precision(k)};
  layer_gemms(fwd, d, false);
  fwd.mem(w.fwd);
  const Elementwise moe = moe_elementwise(d), mla = mla_elementwise(d);
  if (d.moe) fwd.mem(moe.fwd);
  if (d.mla) fwd.mem(mla.fwd);
  // The linears' output widths on this rank: all of them, and those besides the MoE GEMMs.
  double out_cols = 0, dense_cols = 0;
  for (const LinearShape& g : layer_gemm_shapes(d)) {
    out_cols += g.n;
    if (g.role != op::kMoe) dense_cols += g.n;
  }
  const Fp8Recipe recipe = k.fp8_recipe;
  // Blackwell's FP8 GEMMs take any operand layout: per-tensor FP8 keeps one copy.
  const bool one_copy = fp8_single_copy(gpu.arch == GpuArch::blackwell, recipe);
  // MoE: the linears besides the routed experts' (attention, and the shared experts' where
  // the model has them).
  const int dense_linears = d.linears.total() - (d.fs > 0 ? 0 : d.linears.up_gate + 1);
  const Fp8Casts casts =
      d.moe ? fp8_moe_casts(d.T, d.Ts, d.h, d.e, d.hout / d.t, d.fs / d.t, dense_cols, dense_linears,
                            op::expert_rows(d), d.fe / d.etp, op::expert_out_cols(d), recipe, one_copy)
            : fp8_casts(d.T, d.Ts, d.h, d.e, d.hout / d.t, d.f / d.t, out_cols, d.linears.total(), recipe,
                        one_copy);
  if (d.fp8) {
    fwd.mem(casts.fwd_bytes, casts.fwd_kernels);
    Acc wc{gpu, eff, k.precision, {}, {}, 0, memo, gemm_precision(k)}, wt = wc;
    // current scaling: an amax kernel before each cast; the gathered-weight path is one
    // kernel a linear (a transpose, or MXFP8's two quantizations)
    wc.mem(layer_weight_params(m, d) * fp8_weight_bytes_per_param(d.e, false, recipe, one_copy),
           fp8_weight_cast_kernels(recipe) * d.linears.total());
    wt.mem(layer_weight_params(m, d) * fp8_weight_bytes_per_param(d.e, true, recipe, one_copy),
           one_copy ? 0 : d.linears.total());
    o.fp8_weight_cast = wc.t, o.fp8_weight_transpose = wt.t;
  }
  // Autocast casts each weight and bias tensor to 16 bits once per forward (one kernel
  // each), and its backward casts each 16-bit gradient back to the fp32 parameter's
  // (r 2, w 4 bytes per parameter), for each linear of the model code (d.linears).
  const int biases = bias_tensors(m, d.linears);
  const int cast_tensors = d.linears.total() + biases;
  const double cast_params = layer_weight_params(m, d);
  if (d.autocast) fwd.mem(MemKernel::stream, cast_params * 6.0, cast_params, cast_tensors);
  Acc bwd{gpu, eff, k.precision, {}, {}, 0, memo, gemm_precision(k)};
  std::array<Seconds, kRoles> wgrad{};
  layer_gemms(bwd, d, true, &wgrad);
  bwd.mem(w.bwd);
  if (d.moe) bwd.mem(moe.bwd);
  if (d.mla) bwd.mem(mla.bwd);
  if (d.fp8) bwd.mem(casts.bwd_bytes, casts.bwd_kernels);
  if (d.autocast) bwd.mem(MemKernel::stream, cast_params * 6.0, cast_params, cast_tensors);
  // each bias gradient: a reduction over the tokens of its linear's output gradient (the
  // router's and experts' with moe_bias, moe_elementwise)
  const double bias_cols = m.linear_bias ? dense_cols : m.qkv_bias ? (d.hq + 2.0 * d.hkv) / d.t : 0.0;
  if (biases > 0) bwd.mem(d.T * bias_cols * d.e, biases);
  const Seconds before_core = bwd.t, linear_bwd = bwd.gemm_t;
  attention_core_bwd(bwd, d);
  o.attn_core_bwd = bwd.t - before_core;
  o.attn_core_fwd = core.t;
  o.fwd = fwd.t + core.t;
  o.bwd = bwd.t;
  o.fwd_linear = fwd.gemm_t;
  o.bwd_linear = linear_bwd;
  o.host.fwd = host_time(fwd.launches + core.launches, eff);
  o.host.bwd = host_time(bwd.launches, eff);
  o.fwd_flops_hw = fwd.f + core.f;
  o.wgrad_qkv = wgrad[kQkv];
  o.wgrad_fc1 = wgrad[kFc1];
  o.bwd_flops_hw = bwd.f;
  o.attn_core_flops_hw = core.f;
  o.host.attn_core_fwd = host_time(core.launches, eff);
  op::module_costs(o, d, core, Acc{gpu, eff, k.precision, {}, {}, 0, memo, gemm_precision(k)});
  set_recompute(o, k.ckpt, k.recompute_modules);
}

void embedding_costs(OpCosts& o, const ModelSpec& m, const Dims& d, const OpKey& k, const GpuSpec& gpu,
                     const Efficiency& eff, GemmMemo* memo) {
  Acc a{gpu, eff, k.precision, {}, {}, 0, memo, gemm_precision(k)};
  const double row = d.T * d.h * d.ew;
  double elementwise = 0;  // bytes of the kernels after the gather
  int kernels = 0;
  a.mem(2.0 * row);  // word-embedding gather
  const int extra_tables = (m.position == PositionKind::learned) + (m.type_vocab > 0);
  elementwise += extra_tables * 5.0 * row;  // gather the row, add it
  kernels += 2 * extra_tables;
  if (m.embedding_norm) elementwise += 2.0 * row, kernels += 1;
  if (d.dropout) elementwise += 2.0 * row + d.T * d.h, kernels += 1;  // dropout
  a.mem(elementwise, kernels);
  o.embed_fwd = a.t;
  o.host.embed_fwd = host_time(a.launches, eff);
  Acc b{gpu, eff, k.precision, {}, {}, 0, memo, gemm_precision(k)};
  b.mem(2.0 * elementwise, 2 * kernels);
  b.mem(d.T * d.h * (d.e + 4.0) * (1 + extra_tables), 1 + extra_tables);  // scatter-add
  o.embed_bwd = b.t;
  o.host.embed_bwd = host_time(b.launches, eff);
}

// torch's log_softmax (+ nll_loss) forward over `logits` computed in c-byte floats from
// e-byte logits: the upcast when e < c (e + c), then three passes over rows (the
// vocabulary) too long for shared memory: read for the max, read for the sum of
// exponentials, read and write the output (4c). nll_loss's gather is per token. The loss
// and every training metric over the logits run it.
void torch_log_softmax_fwd(Acc& a, double logits, double e, double c) {
  const bool up = e < c;
  a.mem(logits * ((up ? e + c : 0.0) + 4.0 * c), up ? 3 : 2);
}

void head_costs(OpCosts& o, const ModelSpec& m, const Dims& d, const OpKey& k, const GpuSpec& gpu,
                const Efficiency& eff, GemmMemo* memo) {
  Acc f{gpu, eff, k.precision, {}, {}, 0, memo, gemm_precision(k)};
  Acc b{gpu, eff, k.precision, {}, {}, 0, memo, gemm_precision(k)};
  if (m.final_norm) {
    f.mem(d.Ts * d.h * 2.0 * d.ew);
    b.mem(d.Ts * d.h * 4.0 * d.ew, 2);
  }
  if (m.vocab_logits) {
    const double v = double(padded_vocab(m, int(d.t))) / d.t;
    f.linear(d.T, v, d.h);
    if (m.logit_softcap) {
      // Gemma 2's cap * tanh(logits / cap) in the logits' dtype: divide, tanh and multiply,
      // 2e bytes each forward; backward the multiply's (2e), tanh's (gradient and saved
      // output in, gradient out: 3e) and the divide's (2e).
      f.mem(MemKernel::stream, d.T * v * 6.0 * d.e, 3.0 * d.T * v, 3);
      b.mem(MemKernel::stream, d.T * v * 7.0 * d.e, 3.0 * d.T * v, 3);
    }
    if (k.cross_entropy == CrossEntropy::fused) {
      f.mem(d.T * v * d.e);           // one kernel reads the logits (online max/sum-exp)
      b.mem(d.T * v * 2.0 * d.e);     // its gradient overwrites them in place
    } else if (d.megatron) {
      // Megatron's vocab-parallel cross-entropy (mpu/cross_entropy.py in 2020-21,
      // core/tensor_parallel/cross_entropy.py since) runs each step as its own pass over
      // the fp32 logits, far larger than L2: the upcast (e + 4; none in fp32), max (4),
      // subtract the max in place (8), exp in place (8), sum (4), divide by the sum in
      // place (8). Backward scales the saved softmax in place (8) and casts it back (4 + e).
      // Megatron-Core's jit-fused variant keeps the fp32 tensors but fuses the passes three
      // ways: upcast + max (e + 4, or a read of 4 in fp32), subtract + exp + sum (8), divide
      // (8); backward scales and casts back in one kernel (4 + e, or 8 in fp32).
      const bool cast = d.e < 4.0;
      if (k.cross_entropy == CrossEntropy::jit_fused) {
        f.mem(d.T * v * ((cast ? d.e + 4.0 : 4.0) + 16.0), 3);
        b.mem(d.T * v * (cast ? 4.0 + d.e : 8.0), 1);
      } else {
        f.mem(d.T * v * ((cast ? d.e + 4.0 : 0.0) + 32.0), cast ? 6 : 5);
        b.mem(d.T * v * (8.0 + (cast ? 4.0 + d.e : 0.0)), cast ? 2 : 1);
      }
    } else {
      // torch's cross_entropy: log_softmax, then nll_loss, in fp32 (c = 4) but for FSDP's
      // 16-bit loss without autocast (c = e), as the memory model has it (activations.h,
      // LayerShape::fp32_loss). Backward: nll_loss_backward writes a dense zero-filled
      // gradient (c) and scatters into it, log_softmax's backward reads it for its row sums,
      // then reads it and the saved output and writes the input gradient (4c), and the
      // upcast's backward casts it down (c + e).
      const double c = k.framework != Framework::fsdp || d.autocast ? 4.0 : d.e;
      const bool up = d.e < c;
      torch_log_softmax_fwd(f, d.T * v, d.e, c);
      b.mem(d.T * v * (5.0 * c + (up ? c + d.e : 0.0)), up ? 4 : 3);
    }
    b.linear_bwd(d.T, v, d.h);
  } else if (m.pooler) {
    f.linear(d.b, d.h, d.h);
    b.linear_bwd(d.b, d.h, d.h);
  }
  o.head_fwd = f.t;
  o.head_bwd = b.t;
  o.head_fwd_linear = f.gemm_t;
  o.head_bwd_linear = b.gemm_t;
  o.host.head_fwd = host_time(f.launches, eff);
  o.host.head_bwd = host_time(b.launches, eff);
  o.head_flops_hw = f.f + b.f;
  if (m.vocab_logits) {
    // A metric's torch cross-entropy under autocast: the fp32 log_softmax of the loss
    // (e + 4 + 16 bytes per 16-bit logit); no backward.
    const double v = double(padded_vocab(m, int(d.t))) / d.t;
    Acc x{gpu, eff, k.precision, {}, {}, 0, memo, gemm_precision(k)};
    torch_log_softmax_fwd(x, d.T * v, d.e, 4.0);
    o.logit_metric = x.t;
    o.host.logit_metric = host_time(x.launches, eff);
  }
}

}  // namespace

OpCosts operator_costs(const ModelSpec& m, const GpuSpec& gpu, const Efficiency& eff, const OpKey& k,
                       GemmMemo* memo) {
  OpCosts o;
  const Dims d = dims(m, k);
  layer_costs(o, m, d, k, gpu, eff, memo);
  embedding_costs(o, m, d, k, gpu, eff, memo);
  head_costs(o, m, d, k, gpu, eff, memo);
  if (!has_dense_layers(m) || k.moe_share >= 1.0) return o;
  OpCosts dense;
  const ModelSpec dm = dense_layer_view(m);
  layer_costs(dense, dm, dims(dm, k), k, gpu, eff, memo);
  return blend_layers(o, dense, k.moe_share);
}

void set_recompute(OpCosts& o, Checkpointing ckpt, std::uint8_t modules) {
  const bool all = recomputes_layers(ckpt);
  o.recompute = all ? o.fwd : Seconds{};
  o.host.recompute = all ? o.host.fwd : Seconds{};
  o.recompute_flops_hw = all ? o.fwd_flops_hw : Flops{};
  for (int i = 0; i < kRecomputeModules; ++i) {
    if (!TrainConfig::recomputes(ckpt, modules, RecomputeModule(i))) continue;
    o.recompute += o.modules[std::size_t(i)].t;
    o.host.recompute += o.modules[std::size_t(i)].host;
    o.recompute_flops_hw += o.modules[std::size_t(i)].flops;
  }
}

}  // namespace dsplan
