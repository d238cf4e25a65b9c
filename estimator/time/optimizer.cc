// Optimizer-step and offload costs; see optimizer.h and docs/model.md §4 Step time.
#include "estimator/time/optimizer.h"

#include <algorithm>
#include <cmath>

namespace dsplan {

namespace {

// Bytes read + written by the update itself on fp32 master weights, per parameter.
double update_bytes(Optimizer o) {
  switch (o) {
    case Optimizer::adam: return 28.0;       // r: p, g, m, v (16); w: p, m, v (12)
    case Optimizer::sgd: return 20.0;        // r: p, g, momentum (12); w: p, momentum (8)
    case Optimizer::adafactor: return 20.0;  // r: p, g (8); w: p (4); update temporaries (8)
    case Optimizer::adam_8bit: return 16.0;  // r: p, g, m8, v8 (10); w: p, m8, v8 (6)
  }
  return 28.0;
}

enum class Impl { fused, per_tensor, foreach, client_loop };

// Unfused per-tensor updates, fp32. torch.optim's single-tensor AdamW: p*=(1-lr wd) 8,
// m=b1 m+(1-b1) g 20, v=b2 v+(1-b2) g^2 24, denom=sqrt(v)/c+eps 24, p-=lr m/denom 16 -> 92 B
// in 8 kernels. SGD with momentum: 32 B in 3 kernels.
// torch.optim's foreach AdamW (PyTorch >= 2.0's default on CUDA, _multi_tensor_adam) runs
// the same steps over all tensors at once and updates m with one lerp (r m g, w m: 12 B
// instead of 20): 84 B.
// A client loop (fused_optimizer 0) is the Hugging Face Trainer's optimizer of the
// transformers 4.x era (its `adamw_hf` default until July 2023, huggingface/transformers
// PR #25109): transformers.optimization.AdamW, whose step per tensor is m.mul_().add_() 20,
// v.mul_().addcmul_() 24, denom = v.sqrt().add_(eps) 16 (the bias corrections fold into one
// scalar step size), p.addcdiv_() 16, and a decay pass only when weight_decay > 0, which
// the Trainer's default 0.0 skips: 76 B in 7 kernels.
double unfused_update_bytes(Optimizer o, Impl impl) {
  switch (o) {
    case Optimizer::adam:
      return impl == Impl::foreach ? 84.0 : impl == Impl::client_loop ? 76.0 : 92.0;
    case Optimizer::sgd: return 32.0;
    case Optimizer::adafactor: return 60.0;
    case Optimizer::adam_8bit: return 16.0;  // bitsandbytes is a fused kernel
  }
  return 92.0;
}
int unfused_kernels(Optimizer o, Impl impl) {
  if (o == Optimizer::adam) return impl == Impl::client_loop ? 7 : 8;
  return o == Optimizer::sgd ? 3 : o == Optimizer::adam_8bit ? 1 : 8;
}

// CPU Adam's update (DeepSpeedCPUAdam): r p32 g32 m v (16) + w p m v (12); before DeepSpeed
// v0.9.0 it also wrote the 16-bit copy (2).
constexpr double kCpuAdamUpdateBytes = 28.0;
// Multi-tensor-apply launches of a fused optimizer step (norm, unscale, update, copy).
constexpr int kOptimizerKernels = 10;
// PyTorch's multi_tensor_apply: one launch covers at most 320 blocks of 65536 elements
// and (for 2-4 tensor lists) about 64 tensors (ATen's MultiTensorApply.cuh).
constexpr double kForeachLaunchElements = 320.0 * 65536.0;
constexpr double kForeachLaunchTensors = 64.0;

// fused_optimizer 1: fused kernels; 0: a client per-tensor loop (the HF Trainer's AdamW);
// -1: the framework's default (DDP: torch.optim's foreach implementation; FSDP: a loop over
// its few flat parameters).
Impl implementation(const TrainConfig& cfg) {
  if (cfg.fused_optimizer >= 0) return cfg.fused_optimizer ? Impl::fused : Impl::client_loop;
  if (cfg.ddp_pytorch2_defaults()) return Impl::foreach;
  return cfg.framework == Framework::fsdp ? Impl::per_tensor : Impl::fused;
}

}  // namespace

double optimizer_bytes_per_param(const TrainConfig& cfg, double grad_bytes) {
  const bool mixed = cfg.precision != Precision::fp32;
  // fp32 master weights beside 16-bit model weights (everything but torch autocast).
  const bool master = mixed && !cfg.torch_autocast() && !cfg.pure16_model();
  const Impl impl = implementation(cfg);
  const bool unfused = impl != Impl::fused;
  // A pure 16-bit model's update reads and writes 16-bit parameters and states: half the bytes.
  const double narrow = cfg.pure16_model() && cfg.optimizer != Optimizer::adam_8bit ? 0.5 : 1.0;
  double b = narrow * (unfused ? unfused_update_bytes(cfg.optimizer, impl) : update_bytes(cfg.optimizer)) +
             grad_bytes;                                        // + gradient-norm read
  if (unfused) b += 8.0;                                        // clip: scale grads in place
  // DeepSpeed ZeRO's step, in every precision (stages 1-3; v0.5.8 stage2.py and stage3.py,
  // v0.16.4 stage_1_and_2.py and stage3.py): get_grad_norm_direct takes each gradient's norm
  // on an fp64 copy (`g.data.double().norm(2)`: 8 B written, 8 B read), and the partition's
  // gradient views are flattened into one tensor before the widening
  // (`self.flatten(self.averaged_gradients[i]).to(fp32)`: read g, write g).
  if (cfg.framework == Framework::deepspeed && cfg.zero_stage >= 1) b += 16.0 + 2.0 * grad_bytes;
  if (master) {
    if (grad_bytes < 4.0) b += grad_bytes + 4.0;                // widen grads to fp32
    b += 4.0 + 2.0;                                             // master -> 16-bit params
    if (cfg.framework == Framework::deepspeed && !cfg.deepspeed_bf16_optimizer())
      b += 8.0;  // unscale_and_clip_grads: one in-place scale of the fp32 grads, every step
    // DeepSpeed fp16 checks every gradient for inf/nan before a step that applies
    // (FP16_Optimizer and ZeRO's check_overflow, v0.5.8 to v0.16.4): at least a widening copy
    // and a sum, `x.float().sum()`: read 2, write 4, read 4. (v0.16.4's ZeRO-1/2 check runs
    // isnan/isinf on the copy too, 28 B; 10 is what every version does.)
    if (cfg.framework == Framework::deepspeed &&
        (cfg.precision == Precision::fp16 || cfg.deepspeed_fp16_optimizer()))
      b += 10.0;
    if (cfg.framework == Framework::megatron) {
      // MixedPrecisionOptimizer.step(): the norm reads the fp32 main grads, fp16 unscales
      // them (_unscale_main_grads_and_check_for_nan), clip_grad (default 1.0) scales them,
      // and train_step zeroes the contiguous gradient buffer.
      if (grad_bytes < 4.0) b += 4.0 - grad_bytes;
      if (cfg.precision == Precision::fp16) b += 8.0;
      b += 8.0 + grad_bytes;
    }
  } else if (cfg.precision == Precision::fp16) {
    b += 8.0;                                                   // GradScaler unscale
  }
  return b;
}

OptimizerCosts optimizer_costs(double shard_params, int tensors, double grad_bytes,
                               const TrainConfig& cfg, const Cluster& cluster,
                               const Efficiency& eff) {
  OptimizerCosts o;
  const GpuSpec& gpu = cluster.node.gpu;
  // An fp16 overflow step (TrainConfig::overflow_step) skips the update: the loss scaler's
  // inf/nan check reads the gradient shard once (DeepSpeed's checks stop at the first bad
  // tensor, so this bounds it) and one host sync reads the flag. Offloaded, the check reads
  // the fp32 gradients in host memory and no parameters go back up.
  const bool overflow = cfg.overflow_step;
  if (cfg.offload == Offload::none && overflow) {
    o.step = Seconds(shard_params * grad_bytes / (gpu.hbm_bw.v * eff.hbm_fraction)) + eff.kernel_overhead +
             eff.host_op_overhead;
    return o;
  }
  if (cfg.offload == Offload::none) {
    const double bytes = shard_params * optimizer_bytes_per_param(cfg, grad_bytes);
    // A per-tensor loop launches per tensor; under ZeRO it runs on one flat partition.
    const int loops = cfg.zero_stage == 0 && !cfg.deepspeed_bf16_optimizer() ? tensors : 1;
    const Impl impl = implementation(cfg);
    const double launches =  // per operation of a foreach step
        std::max(std::ceil(loops / kForeachLaunchTensors), std::ceil(shard_params / kForeachLaunchElements));
    const int ops = unfused_kernels(cfg.optimizer, impl) + 4;
    const int kernels = impl == Impl::fused       ? kOptimizerKernels
                        : impl == Impl::foreach ? ops * static_cast<int>(std::max(1.0, launches))
                                                : loops * ops;
    o.step = Seconds(bytes / (gpu.hbm_bw.v * eff.hbm_fraction)) + eff.kernel_overhead * kernels;
    // A foreach operation is one call from Python whose multi_tensor_apply launches its
    // chunks in a C++ loop: the host's per-op cost is paid once per operation there.
    o.host = eff.host_op_overhead * (impl == Impl::foreach ? ops : kernels);
    if (cfg.deepspeed_fp16_optimizer()) {
      // FP16_Optimizer's step (runtime/fp16/fused_optimizer.py; unfused_optimizer.py for a
      // client optimizer) walks the parameter tensors three times from Python. First
      // CheckOverflow.has_overflow_serial reads each gradient back, `float(x.float().sum())`:
      // two kernels and a device-to-host read that waits for them, so the host cannot run
      // ahead and each tensor costs its three host ops in series (the first read also waits
      // for the backward to drain). Then each gradient is widened into the flat fp32 buffer
      // (`p.grad.to(fp32)`) and, after the update, each parameter copies its slice of the
      // master weights (`p.data.copy_(q)`): a kernel a tensor each, issued by a host that
      // starts level with the GPU. Their bytes are in optimizer_bytes_per_param.
      const Seconds serial = eff.host_op_overhead * (3.0 * tensors);
      const Seconds copies = eff.host_op_overhead * (2.0 * tensors);
      o.step = serial + std::max(o.step + eff.kernel_overhead * (4.0 * tensors), o.host + copies);
      o.host += serial + copies;
    }
    return o;
  }
  const double local_ranks = std::max(1, cluster.gpus_per_node());
  const double host_bw = cluster.node.host_mem_bw.v * eff.host_mem_fraction / local_ranks;
  const bool ds = cfg.framework == Framework::deepspeed;
  const double param_bytes = cfg.precision == Precision::fp32 ? 4.0 : 2.0;
  // The update: CPU Adam, or a client torch.optim optimizer handed to DeepSpeed
  // (fused_optimizer 0: "Using client Optimizer as basic optimizer"), which ZeRO-Offload runs
  // as it is on the flat fp32 host partition: ATen's single-tensor passes, 92 B a parameter
  // for AdamW (the HF Trainer's AdamW without decay moves 16 fewer; not told apart here), at
  // the same share of the host's DRAM bandwidth as CPU Adam (session 48;
  // Efficiency::host_mem_fraction).
  const bool client = cfg.fused_optimizer == 0;
  const double update = client ? unfused_update_bytes(cfg.optimizer, Impl::per_tensor) : kCpuAdamUpdateBytes;
  // Around it, DeepSpeed's step on the host partition (stage_1_and_2.py and stage3.py, v0.3
  // to v0.18; session 49): unscale_and_clip_grads multiplies the fp32 gradients by
  // 1/combined_scale in place in every precision (read + write 4 B; the "optimizer_gradients"
  // timer), and the updated fp32 partition is narrowed into the working-copy buffer on the
  // host (read 4, write 2, or 4 in fp32; since v0.9.0, PR 3097, when CPU Adam stopped writing
  // the 16-bit copy itself). Elsewhere CPU Adam writes that copy (2 B). An overflow step only
  // checks the fp32 gradients (4 B).
  const double around = ds ? 8.0 + 4.0 + param_bytes : client ? 0.0 : 2.0;
  const double host_bytes = overflow ? 4.0 : update + around;
  o.step = Seconds(host_bw > 0 ? shard_params * host_bytes / host_bw : 0.0) +
           (overflow ? eff.host_op_overhead : Seconds{});
  // The updated working copy comes up at the parameters' element size (16 bits, or 4 bytes
  // when the whole run is fp32: session 48, where 2 bytes each way had been priced for every
  // precision). The gradients go down at their element size, but DeepSpeed widens them to
  // fp32 on the GPU first (master_weights_and_grads_dtype; async_inplace_copy_grad_to_fp32_
  // buffer_from_gpu since the 2020 release): 4 B at the accumulation boundary. Before it,
  // ZeRO-2 copies each micro-batch's 16-bit accumulation down (async_accumulate_grad_in_cpu_
  // via_gpu) and ZeRO-3 (v0.18) accumulates on the GPU, so a reduction round moves on average
  // (4 + (m - 1) g) / m for ZeRO-2 and 4 / m for ZeRO-3 over the step's m rounds (session 49).
  const double pcie = gpu.pcie_bw.v * eff.pcie_fraction;
  if (pcie > 0) {
    double down = grad_bytes;
    if (ds) {
      const double m = cfg.zero_stage >= 2 ? std::max(1, cfg.grad_accum) : 1;
      down = (4.0 + (cfg.zero_stage == 2 ? (m - 1.0) * grad_bytes : 0.0)) / m;
    }
    o.d2h = Seconds(shard_params * down / pcie);
    if (!overflow) o.h2d = Seconds(shard_params * param_bytes / pcie);
  }
  return o;
}

}  // namespace dsplan
