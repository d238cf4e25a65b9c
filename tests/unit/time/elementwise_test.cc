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

// Standard attention's score passes, Hugging Face layer under autocast (e = 2, ew = 4):
// scale 2e + mask 2e + softmax (e + ew) + dropout (2ew + 1) + cast down (ew + e) = 4 + 4 +
// 6 + 9 + 6 = 29 B per score forward in 5 kernels, each backward twice its forward; the
// classes split them 4 + 6 (stream), 4 (mask), 6 (softmax), 9 (dropout forward).
TEST(MemKernels, ScorePassesKeepTheirBytesAndSplitByClass) {
  OpKey k;
  k.micro_batch = 2;
  k.seq_len = 1024;
  k.framework = Framework::ddp;
  const ModelSpec m = test::gpt("g", 2, 768, 12, 1024, 50257, 1024);
  const op::Dims d = op::dims(m, k);
  ASSERT_TRUE(d.autocast);
  const double sc = 2.0 * 12 * 1024 * 1024;
  const Elementwise w = score_elementwise(d);
  EXPECT_DOUBLE_EQ(w.fwd.total_bytes(), 29.0 * sc);
  EXPECT_DOUBLE_EQ(w.bwd.total_bytes(), 58.0 * sc);
  EXPECT_EQ(w.fwd.kernels, 5);
  EXPECT_EQ(w.bwd.kernels, 10);
  const auto at = [](const MemWork& x, MemKernel c) { return x.bytes[static_cast<std::size_t>(c)]; };
  EXPECT_DOUBLE_EQ(at(w.fwd, MemKernel::stream), 10.0 * sc);
  EXPECT_DOUBLE_EQ(at(w.fwd, MemKernel::mask), 4.0 * sc);
  EXPECT_DOUBLE_EQ(at(w.fwd, MemKernel::softmax_fwd), 6.0 * sc);
  EXPECT_DOUBLE_EQ(at(w.fwd, MemKernel::dropout_fwd), 9.0 * sc);
  EXPECT_DOUBLE_EQ(at(w.bwd, MemKernel::softmax_bwd), 12.0 * sc);
  EXPECT_DOUBLE_EQ(at(w.bwd, MemKernel::dropout_fwd), 0.0);  // a mask multiply streams
}

// GPT-2's unfused gelu_new (ten fp32 kernels under autocast, 76 B per element) streams;
// Megatron's fused bias-gelu is the gelu class; a gated MLP stays blended.
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
  m.gated_mlp = true;
  w = layer_elementwise(op::dims(m, k));
  EXPECT_EQ(at(w.fwd, MemKernel::gelu), 0.0);
}

}  // namespace
}  // namespace dsplan
