// Memory-bound kernels by class (estimator/time/elementwise.h): hand-derived times, the
// classes against the PyTorch kernels they were fitted to on an H100 and an H200, and the
// byte counts the layer's kernels carry into them.
#include "estimator/time/elementwise.h"

#include <gtest/gtest.h>

#include <cmath>

#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/op_dims.h"
#include "hwdb/hwdb.h"
#include "time_fixtures.h"

namespace dsplan {
namespace {

// Without classes (every GPU before Hopper) a class is the blend: 1 GB at 0.8 of an
// A100-80GB's 2,039 GB/s takes 1e9 / 1.6312e12 = 613.05 us, whatever its class.
TEST(MemKernels, OffBeforeHopper) {
  const GpuSpec a100 = *gpu_preset("a100-80gb");
  const Efficiency eff = default_efficiency(a100);
  EXPECT_EQ(eff.stream_hbm_fraction, 0.0);
  for (MemKernel k : {MemKernel::blended, MemKernel::stream, MemKernel::softmax_fwd, MemKernel::mask})
    EXPECT_NEAR(mem_seconds(k, 1e9, 5e8, a100, eff).v, 613.05e-6, 0.01e-6);
}

// H200 (4,800 GB/s, 132 SMs at 1,980 MHz): 1 GB streams at 0.89 in 1e9 / 4.272e12 =
// 234.08 us. Softmax forward over 2.5e8 elements (4 B each) issues at 2.9 per SM per clock:
// 2.5e8 / (2.9 x 132 x 1.98e9) = 329.84 us, so (234.08^3 + 329.84^3)^(1/3) = 365.21 us.
// The blend stays at 0.8: 1e9 / 3.84e12 = 260.42 us.
TEST(MemKernels, HandDerivedOnH200) {
  const GpuSpec h200 = *gpu_preset("h200-141gb");
  const Efficiency eff = default_efficiency(h200);
  EXPECT_NEAR(mem_seconds(MemKernel::stream, 1e9, 2.5e8, h200, eff).v, 234.08e-6, 0.01e-6);
  EXPECT_NEAR(mem_seconds(MemKernel::softmax_fwd, 1e9, 2.5e8, h200, eff).v, 365.21e-6, 0.01e-6);
  EXPECT_NEAR(mem_seconds(MemKernel::blended, 1e9, 2.5e8, h200, eff).v, 260.42e-6, 0.01e-6);
  MemWork w;
  w.add(MemKernel::stream, 1e9, 2.5e8);
  w.add(MemKernel::softmax_fwd, 1e9, 2.5e8);
  EXPECT_NEAR(mem_seconds(w, h200, eff).v, (234.08 + 365.21) * 1e-6, 0.02e-6);
}

// The classes against what they were fitted to: PyTorch 2.11's own bf16 kernels on 2^29
// elements, timed with CUDA events by scripts/elementwise_rates.py on the lent H100 SXM and
// H200 (session 22; docs/accuracy.md, "Real runs on one H200"). GB/s count the bytes per
// element below. One stream fraction and one issue rate per class must reproduce both
// GPUs, whose HBM differs by 1.43x and whose SMs and clocks are the same.
struct Measured {
  MemKernel kind;
  double bytes_per_elem, h100_GBps, h200_GBps, tolerance;
};
TEST(MemKernels, ReproduceTheMeasuredKernelsOnBothHopperParts) {
  const Measured rows[] = {
      {MemKernel::stream, 4, 2935, 4208, 0.03},       // copy
      {MemKernel::stream, 6, 3056, 4378, 0.03},       // add
      {MemKernel::stream, 5, 2959, 4345, 0.03},       // dropout backward
      {MemKernel::gelu, 4, 3004, 3693, 0.06},         // gelu (tanh)
      {MemKernel::dropout_fwd, 5, 2521, 3056, 0.02},  // dropout forward
      {MemKernel::softmax_fwd, 4, 2366, 2729, 0.02},  // softmax, rows of 1024
      {MemKernel::softmax_bwd, 6, 1389, 1857, 0.15},  // its backward: the worst fit
      {MemKernel::mask, 4, 1538, 1629, 0.02},         // causal where, broadcast mask
  };
  const GpuSpec h100 = *gpu_preset("h100-80gb"), h200 = *gpu_preset("h200-141gb");
  const double n = double(1 << 29);
  for (const Measured& r : rows) {
    for (const auto& [gpu, measured] : {std::pair{h100, r.h100_GBps}, std::pair{h200, r.h200_GBps}}) {
      const double t = mem_seconds(r.kind, n * r.bytes_per_elem, n, gpu, default_efficiency(gpu)).v;
      const double model_GBps = n * r.bytes_per_elem / t / 1e9;
      EXPECT_LT(std::abs(std::log(model_GBps / measured)), r.tolerance)
          << gpu.name << " class " << int(r.kind) << ": model " << model_GBps << " GB/s, measured "
          << measured;
    }
    // The blend these kernels had before (0.8 of HBM) missed most of them by far more.
  }
  EXPECT_GT(std::abs(std::log(0.8 * 4800 / 1629.0)), 0.8);  // the where: 2.4x too fast
}

// Session 27 timed the block's other kernels as the reference workload runs them
// (scripts/block_kernel_rates.py, PyTorch 2.11, bf16, on the lent H100 SXM and H200; none
// of them was used to fit a class). Microseconds for n elements, and what the model
// charges (docs/accuracy.md, "Session 27"):
//  - SwiGLU, silu then product over 2^28 gate elements: 10 B an element forward, 18
//    backward, streamed;
//  - tanh GELU's backward over 2^28: 6 B (gradient and input in, gradient out), streamed;
//  - eager rotary over 2^26 (head dim 64) and 2^27 (head dim 128) elements of q: 20 B each
//    way, and 4 elements written an element forward, 6 backward, at the mask class's issue
//    rate. The mask class was fitted to the broadcast where alone, so rotary is its
//    prediction; it is 0-19% slow (head dim 128 on the H200 the worst).
struct Timed {
  const char* what;
  MemKernel kind;
  double n, bytes, elems, h100_us, h200_us, tolerance;
};
TEST(MemKernels, PredictTheBlockKernelsMeasuredInSession27) {
  const double f = double(1 << 28), r64 = double(1 << 26), r128 = double(1 << 27);
  const Timed rows[] = {
      {"swiglu fwd", MemKernel::stream, f, 10, 2, 888.5, 644.1, 0.03},
      {"swiglu bwd", MemKernel::stream, f, 18, 4, 1612.3, 1123.4, 0.03},
      {"gelu bwd", MemKernel::stream, f, 6, 1, 540.0, 404.2, 0.08},
      {"rope d64 fwd", MemKernel::mask, r64, 20, 4, 692.1, 616.2, 0.10},
      {"rope d64 bwd", MemKernel::mask, r64, 20, 6, 1011.9, 906.5, 0.10},
      {"rope d128 fwd", MemKernel::mask, r128, 20, 4, 1287.5, 1121.8, 0.20},
      {"rope d128 bwd", MemKernel::mask, r128, 20, 6, 1977.5, 1754.4, 0.13},
  };
  const GpuSpec h100 = *gpu_preset("h100-80gb"), h200 = *gpu_preset("h200-141gb");
  for (const Timed& r : rows)
    for (const auto& [gpu, us] : {std::pair{h100, r.h100_us}, std::pair{h200, r.h200_us}}) {
      const Efficiency eff = default_efficiency(gpu);
      const double t = mem_seconds(r.kind, r.n * r.bytes, r.n * r.elems, gpu, eff).v * 1e6;
      EXPECT_LT(std::abs(std::log(t / us)), r.tolerance)
          << r.what << " on " << gpu.name << ": model " << t << " us, measured " << us;
      // The blend these kernels had (0.8 of HBM, bytes alone) put rotary 1.3-2.6x too fast.
      if (r.kind == MemKernel::mask) {
        EXPECT_GT(std::log(us / mem_seconds(MemKernel::blended, r.n * r.bytes, 0, gpu, eff).v / 1e6), 0.2);
      }
    }
}

// A Llama layer outside Megatron (ddp, bf16 autocast, T = 2048 tokens, h 2048, f 8192, 32
// query and 8 key/value heads of 64): SwiGLU streams 5e and 9e an FFN element; rotary
// carries 2e + 16 = 20 B over T (2048 + 512) elements each way, with 4 and 6 elements
// written an element; RMSNorm is Hugging Face's chain (ew = 4, no casts: forward pow 8 and
// mean 4 stream, the rsqrt and weight products 8 + 8 run the mask class; backward 20 B of
// mask-class products (3 elements) and 72 streamed, per element of T h) unless the run
// fuses it (2ew = 8 and 4ew = 16, blended).
// A Llama 3.2 1B-shaped block (hidden 2048, 32 query and 8 key/value heads of 64, SwiGLU
// of 8192, RMSNorm, rotary, no dropout) and a DDP key (bf16 autocast).
ModelSpec llama_1b_block() {
  ModelSpec m = test::gpt("llama-1b", 16, 2048, 32, 2048, 128256, 1);
  m.kv_heads = 8, m.ffn_hidden = 8192, m.gated_mlp = true, m.activation = Activation::silu;
  m.norm = NormKind::rmsnorm, m.position = PositionKind::rotary, m.dropout = false;
  return m;
}
OpKey ddp_key(int micro_batch, int seq = 2048) {
  OpKey k;
  k.micro_batch = micro_batch;
  k.seq_len = seq;
  k.framework = Framework::ddp;
  return k;
}

TEST(MemKernels, EagerLlamaKernelsByClassAndTheFusedRmsNorm) {
  OpKey k = ddp_key(1);
  const ModelSpec m = llama_1b_block();
  const auto at = [](const MemWork& x, MemKernel c) { return x.bytes[static_cast<std::size_t>(c)]; };
  const auto elems = [](const MemWork& x, MemKernel c) { return x.elems[static_cast<std::size_t>(c)]; };
  const double T = 2048, ffn = T * 8192, qk = T * (2048 + 512), x = T * 2048;
  Elementwise w = layer_elementwise(op::dims(m, k));
  // Two RMSNorms, rotary and standard attention's layout copies in the mask class (2 x 2 B
  // an element each): forward q, k^T and v for the batched GEMMs (q + 2 kv elements), the
  // output (q) and the K/V repeat (q + kv written, 2q elements); backward the q, k and v
  // gradients twice (made contiguous, then back to the linears' layout).
  const double q = T * 2048, kv = T * 512;
  EXPECT_DOUBLE_EQ(at(w.fwd, MemKernel::mask),
                   20.0 * qk + 2 * 16.0 * x + 4.0 * (q + 2.0 * kv) + 4.0 * q + 4.0 * (q + kv));
  EXPECT_DOUBLE_EQ(elems(w.fwd, MemKernel::mask), 4.0 * qk + 2 * 2.0 * x + (q + 2.0 * kv) + q + 2.0 * q);
  EXPECT_DOUBLE_EQ(at(w.bwd, MemKernel::mask), 20.0 * qk + 2 * 20.0 * x + 2 * 4.0 * (q + 2.0 * kv));
  EXPECT_DOUBLE_EQ(elems(w.bwd, MemKernel::mask), 6.0 * qk + 2 * 3.0 * x + 2 * (q + 2.0 * kv));
  // The stream class holds SwiGLU (10 B forward) beside the residual adds (2 x 12 B of x),
  // the QKV and gate/up inputs' casts (2 x 6 B of x) and the norms' pow and mean (2 x 12).
  EXPECT_DOUBLE_EQ(at(w.fwd, MemKernel::stream), 10.0 * ffn + 24.0 * x + 12.0 * x + 2 * 12.0 * x);
  EXPECT_DOUBLE_EQ(at(w.fwd, MemKernel::blended), 0.0);
  EXPECT_EQ(w.fwd.kernels - 2 * 4, layer_elementwise(op::dims(m,
                                                              [&] {
                                                                OpKey f = k;
                                                                f.norm_kernel = NormKernel::fused;
                                                                return f;
                                                              }()))
                                           .fwd.kernels -
                                       2 * 1);
  k.norm_kernel = NormKernel::fused;
  w = layer_elementwise(op::dims(m, k));
  EXPECT_DOUBLE_EQ(at(w.fwd, MemKernel::blended), 2 * 8.0 * x);
  EXPECT_DOUBLE_EQ(at(w.bwd, MemKernel::blended), 2 * 16.0 * x);
}

// Eager against fused RMSNorm on the H200, per norm, against session 27's profiles of
// Llama 3.2 1B at micro-batch 4 (T h = 8192 x 2048 = 16,777,216 fp32 elements; 33 norms a
// step, tests/data/kernels/prof_llama1b_mbs4_*_h200*.json): the eager chain's kernels took
// 23.39 ms a step, of which 2.72 ms were extra optimizer launches that are not the norm's
// (not priced), and the fused kernels 4.75 ms: (23.39 - 2.72 - 4.75) / 33 = 482 us more a
// norm. The model's difference, launches at 3 us included, must land within 15%.
TEST(MemKernels, EagerRmsNormAgainstTheH200Profile) {
  OpKey k = ddp_key(4);
  const ModelSpec m = llama_1b_block();
  const GpuSpec h200 = *gpu_preset("h200-141gb");
  const Efficiency eff = default_efficiency(h200);
  const auto layer_time = [&](NormKernel n) {
    k.norm_kernel = n;
    const Elementwise w = layer_elementwise(op::dims(m, k));
    return (mem_seconds(w.fwd, h200, eff) + mem_seconds(w.bwd, h200, eff) +
            eff.kernel_overhead * (w.fwd.kernels + w.bwd.kernels))
        .v;
  };
  const double per_norm_us = (layer_time(NormKernel::eager) - layer_time(NormKernel::fused)) / 2 * 1e6;
  EXPECT_LT(std::abs(std::log(per_norm_us / 482.0)), 0.15) << per_norm_us;
}

// Standard attention's score passes under autocast (e = 2; the softmax runs in fp32), one
// kernel each as the session-27 profiles list them. Forward: scale 2e + mask 2e + upcast
// (e + 4) + softmax 8 + dropout 9 + downcast (4 + e) = 4 + 4 + 6 + 8 + 9 + 6 = 37 B a score
// in 6 kernels. Backward: upcast 6 + dropout 9 + softmax 12 + the fp32 product 12 +
// downcast 6 + mask 4 + scale 4 = 53 B in 7. By class: the two conversions to fp32 and the
// masks run the mask class (fwd 4 + 6, bwd 6 + 4); the fp32 softmax backward streams.
// Without autocast (DeepSpeed fp16, e = ew = 2) each pass's backward moves twice its
// forward: scale 4 + mask 4 + softmax 4 + dropout 5 = 17 B forward, 34 backward, and the
// 16-bit softmax backward is its own class (8 B).
TEST(MemKernels, ScorePassesKeepTheirBytesAndSplitByClass) {
  OpKey k = ddp_key(2, 1024);
  const ModelSpec m = test::gpt("g", 2, 768, 12, 1024, 50257, 1024);
  const op::Dims d = op::dims(m, k);
  ASSERT_TRUE(d.autocast);
  const double sc = 2.0 * 12 * 1024 * 1024;
  Elementwise w = score_elementwise(d);
  EXPECT_DOUBLE_EQ(w.fwd.total_bytes(), 37.0 * sc);
  EXPECT_DOUBLE_EQ(w.bwd.total_bytes(), 53.0 * sc);
  EXPECT_EQ(w.fwd.kernels, 6);
  EXPECT_EQ(w.bwd.kernels, 7);
  const auto at = [](const MemWork& x, MemKernel c) { return x.bytes[static_cast<std::size_t>(c)]; };
  EXPECT_DOUBLE_EQ(at(w.fwd, MemKernel::stream), 10.0 * sc);
  EXPECT_DOUBLE_EQ(at(w.fwd, MemKernel::mask), 10.0 * sc);
  EXPECT_DOUBLE_EQ(at(w.fwd, MemKernel::softmax_fwd), 8.0 * sc);
  EXPECT_DOUBLE_EQ(at(w.fwd, MemKernel::dropout_fwd), 9.0 * sc);
  EXPECT_DOUBLE_EQ(at(w.bwd, MemKernel::mask), 10.0 * sc);
  EXPECT_DOUBLE_EQ(at(w.bwd, MemKernel::stream), 43.0 * sc);
  EXPECT_DOUBLE_EQ(at(w.bwd, MemKernel::softmax_bwd), 0.0);
  k.framework = Framework::deepspeed;
  k.precision = Precision::fp16;
  w = score_elementwise(op::dims(m, k));
  EXPECT_DOUBLE_EQ(w.fwd.total_bytes(), 17.0 * sc);
  EXPECT_DOUBLE_EQ(w.bwd.total_bytes(), 34.0 * sc);
  EXPECT_DOUBLE_EQ(at(w.bwd, MemKernel::softmax_bwd), 8.0 * sc);
}

// The autocast score passes on the H200 against the session-27 profile of the reference
// workload's standard attention (GPT-2, micro-batch 16: 16 x 12 x 1024^2 = 201,326,592
// scores a layer). The profile's kernels over the scores took 2,758 us a layer forward
// and 3,283 backward; 190 us of each is masked_fill's clone, not priced, so 2,568 and
// 3,093. The model must land within 10% of each.
TEST(MemKernels, AutocastScorePassesAgainstTheH200Profile) {
  const OpKey k = ddp_key(16, 1024);
  const ModelSpec m = test::gpt("gpt2", 12, 768, 12, 1024, 50257, 1);
  const GpuSpec h200 = *gpu_preset("h200-141gb");
  const Efficiency eff = default_efficiency(h200);
  const Elementwise w = score_elementwise(op::dims(m, k));
  EXPECT_LT(std::abs(std::log(mem_seconds(w.fwd, h200, eff).v * 1e6 / 2568.0)), 0.10);
  EXPECT_LT(std::abs(std::log(mem_seconds(w.bwd, h200, eff).v * 1e6 / 3093.0)), 0.10);
}

// Megatron-LM before commit 51a2e6b (2020-09-11: the 2019 code and v1.0) ran its attention
// scale, mask and softmax and its bias + dropout + residual add as separate PyTorch ops.
// GPT layer, h 1536, 16 heads, micro-batch 8 at 1024 tokens, fp16 (e = 2), dropout on,
// standard attention; sc = 8 x 16 x 1024^2 scores, x = 8 x 1024 x 1536 activations:
//  - scores: fused softmax (r 2, w 2) + dropout (r 2, w 2, mask 1) = 9 B forward, 18
//    backward, in 2 kernels; unfused adds the scale and the mask (r 2, w 2 each): 17 and 34
//    B in 4 kernels forward;
//  - twice a layer: fused bias-dropout-add r 2 x 2 + w 2 + mask 1 = 7 B an element (14x
//    forward, 28x backward); unfused dropout 5 and add 6 (22x forward, 44x backward).
TEST(MemKernels, MegatronBeforeItsFusedKernelsRunsThemApart) {
  OpKey k;
  k.micro_batch = 8;
  k.seq_len = 1024;
  k.framework = Framework::megatron;
  k.precision = Precision::fp16;
  const ModelSpec m = test::gpt("g", 2, 1536, 16, 1024, 51200, 128);
  const double sc = 8.0 * 16 * 1024 * 1024, x = 8.0 * 1024 * 1536;
  const op::Dims fused = op::dims(m, k);
  ASSERT_TRUE(fused.dropout && fused.fused_elementwise);
  const Elementwise fs = score_elementwise(fused);
  EXPECT_DOUBLE_EQ(fs.fwd.total_bytes(), 9.0 * sc);
  EXPECT_DOUBLE_EQ(fs.bwd.total_bytes(), 18.0 * sc);
  EXPECT_EQ(fs.fwd.kernels, 2);
  k.megatron_unfused = true;
  const op::Dims apart = op::dims(m, k);
  EXPECT_FALSE(apart.fused_elementwise);
  const Elementwise as = score_elementwise(apart);
  EXPECT_DOUBLE_EQ(as.fwd.total_bytes(), 17.0 * sc);
  EXPECT_DOUBLE_EQ(as.bwd.total_bytes(), 34.0 * sc);
  EXPECT_EQ(as.fwd.kernels, 4);
  const Elementwise fl = layer_elementwise(fused), al = layer_elementwise(apart);
  EXPECT_DOUBLE_EQ(al.fwd.total_bytes() - fl.fwd.total_bytes(), (22.0 - 14.0) * x);
  EXPECT_DOUBLE_EQ(al.bwd.total_bytes() - fl.bwd.total_bytes(), (44.0 - 28.0) * x);
  EXPECT_EQ(al.fwd.kernels - fl.fwd.kernels, 2);
  // The release gate: 2019-06 and v1.0 (2020-04) are before the fusion, 2020-09 after.
  TrainConfig c;
  c.framework = Framework::megatron;
  for (const auto& [release, unfused] :
       {std::pair{201906, true}, {202004, true}, {202009, false}, {0, false}}) {
    c.megatron_release = release;
    EXPECT_EQ(c.megatron_unfused_elementwise(), unfused) << release;
  }
}

// GPT-2's unfused gelu_new (ten fp32 kernels under autocast, 76 B per element) streams;
// Megatron's fused bias-gelu is the gelu class and its backward streams 3e an element
// (gradient and input in, gradient out); Megatron's fused SwiGLU stays blended.
TEST(MemKernels, ActivationClassFollowsItsKernel) {
  OpKey k;
  k.micro_batch = 1;
  k.seq_len = 1024;
  k.framework = Framework::ddp;
  ModelSpec m = test::gpt("g", 2, 768, 12, 1024, 50257, 1024);
  m.activation_unfused = true;
  const auto at = [](const MemWork& x, MemKernel c) { return x.bytes[static_cast<std::size_t>(c)]; };
  const double ffn = 1024.0 * m.ffn_hidden;
  Elementwise w = layer_elementwise(op::dims(m, k));
  EXPECT_GE(at(w.fwd, MemKernel::stream), 76.0 * ffn);
  EXPECT_EQ(at(w.fwd, MemKernel::gelu), 0.0);
  m.activation_unfused = false;
  k.framework = Framework::megatron;
  w = layer_elementwise(op::dims(m, k));
  EXPECT_DOUBLE_EQ(at(w.fwd, MemKernel::gelu), 2.0 * 2.0 * ffn);  // r 2 + w 2 per element
  EXPECT_DOUBLE_EQ(at(w.bwd, MemKernel::gelu), 0.0);
  m.gated_mlp = true;
  w = layer_elementwise(op::dims(m, k));
  EXPECT_EQ(at(w.fwd, MemKernel::gelu), 0.0);
}

}  // namespace
}  // namespace dsplan
