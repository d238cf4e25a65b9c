// Model states per framework. Notation: P = params on this rank's replica, N = dp,
// w = bytes of the working (16-bit or fp32) copy, s = optimizer state bytes per param.
//  DeepSpeed   ZeRO-0: wP params, wP grads, (4+s)P. In bf16 before DeepSpeed 0.17.6 or in a
//              pipeline this is BF16_Optimizer (TrainConfig::deepspeed_bf16_optimizer): +
//              4P fp32 gradient buffer, and the fp32 master and states partitioned like
//              ZeRO-1, (4+s)P/N; since, outside a pipeline, the fp16 layout above.
//              ZeRO-1: wP params, wP grads + wP/N contiguous partition, (4+s)P/N.
//              ZeRO-2: wP params, wP/N grads (the contiguous partition), (4+s)P/N; with
//              accumulation the accumulated partition and the one being filled: 2wP/N.
//              ZeRO-1/2 build the fp32 gradient partition (4P/N) inside step() and
//              free it there (stage_1_and_2.py, DeepSpeed 0.8): step_only, after backward.
//              ZeRO-3: wP/N params, 4P/N fp32 grads, (4+s)P/N, + 2w x largest module.
//              Offload moves the fp32 grads, master and states (and at 'all' the ZeRO-3
//              params) to the host. fp32 runs still clone an fp32 master partition.
//  Megatron    wP params, 4P fp32 main grads, (4+s)P master+states (/N with the
//              distributed optimizer, zero_stage >= 1): 18 or 6 + 12/N for Adam.
//              Megatron-FSDP (zero_stage 3, optim_grads_params): params, main grads,
//              master and states all /N, and its buffers: the unit (a layer) being
//              computed and the prefetched one gathered (2 x w x unit), and the unit's
//              gradients before their reduce-scatter (main-grad bytes x unit).
//  FSDP        fp32 sharded params/grads 4P/N each, sP/N; FULL_SHARD (stage 3) gathers
//              one unit plus one prefetched and the unit's 16-bit grads; SHARD_GRAD_OP
//              (stage 2) keeps every 16-bit param gathered from forward to backward.
//              FSDP2 (fully_shard) all-gathers into an output buffer and copies it out
//              into the unsharded parameters: one more unit while the copy runs.
//  DDP (amp)   fp32 params + grads (4P each), sP, plus the 16-bit weight casts autocast
//              saves for backward (2P; recomputed layers save none: the casts die with
//              autocast's cache when the forward ends, and the recompute re-casts one
//              layer at a time). zero_stage 1/2 = optimizer-state / gradient
//              sharding (ZeroRedundancyOptimizer, fairscale OSS/ShardedDDP). On one rank
//              without accumulation, under PyTorch >= 2.0's defaults, the gradients exist
//              only from backward to the step. Its foreach Adam step adds an fp32 list
//              of sqrt(exp_avg_sq) (4P) while the casts are already freed: 20 B/param
//              at the step on one rank (4 params + 4 grads + 8 states + 4).
// Host per node = 1.5 x ranks per node x max(fp32 model built on the CPU at init,
// offloaded states), following DeepSpeed's estimators (peers.md section 2).
#include "estimator/memory/model_states.h"

#include <algorithm>

namespace dsplan {

namespace {

struct Ctx {
  double P, N, w, s, master;
  bool mixed;
};

ModelStateMemory deepspeed_states(const ModelStateInputs& in, const Ctx& c) {
  ModelStateMemory m;
  const bool off_opt = in.zero_stage >= 1 && in.offload != Offload::none;
  const bool off_par = in.zero_stage == 3 && in.offload == Offload::all;
  const double states_shard = (4 + c.s) * c.P / c.N;  // fp32 master + optimizer states
  double host_rank = 0;
  double init_rank = 4 * c.P;  // the fp32 model each rank builds on the CPU first
  switch (in.zero_stage) {
    case 0:
      m.params = c.w * c.P;
      m.grads = c.w * c.P + (in.bf16_optimizer ? 4 * c.P : 0);
      m.optimizer = in.bf16_optimizer ? states_shard : (c.master + c.s) * c.P;
      break;
    case 1:
      m.params = c.w * c.P;
      m.grads = c.w * c.P + (off_opt ? 0 : c.w * c.P / c.N);
      m.optimizer = off_opt ? 0 : states_shard;
      m.step_only = off_opt ? 0 : 4 * c.P / c.N;
      break;
    case 2:
      m.params = c.w * c.P;
      m.grads = off_opt ? 0 : (in.grad_accum > 1 ? 2 : 1) * c.w * c.P / c.N;
      m.optimizer = off_opt ? 0 : states_shard;
      m.step_only = off_opt ? 0 : 4 * c.P / c.N;
      break;
    default:
      m.params = (off_par ? 0 : c.w * c.P / c.N) + c.w * in.persistent;
      m.grads = off_opt ? 0 : 4 * c.P / c.N;
      m.optimizer = off_opt ? 0 : states_shard;
      m.gathered = 2 * c.w * in.largest_module;
      init_rank = 4 * in.largest_module;  // zero.Init partitions while constructing
      break;
  }
  if (off_opt) host_rank = 4 * c.P / c.N + states_shard;
  if (off_par) host_rank += c.w * c.P / c.N;
  m.host_per_node = kHostBufferFactor * in.gpus_per_node * std::max(init_rank, host_rank);
  return m;
}

ModelStateMemory megatron_states(const ModelStateInputs& in, const Ctx& c) {
  ModelStateMemory m;
  m.params = c.w * c.P;
  // fp32 main_grad buffer in every precision, except bf16 configured with a 16-bit buffer
  // (TrainConfig::megatron_fp32_grads; Megatron-Core grad_reduce_in_fp32=False).
  const bool bf16_buffer = !in.megatron_fp32_grads && in.precision == Precision::bf16;
  const double g = bf16_buffer ? c.w : 4.0;
  m.grads = g * c.P;
  if (in.zero_stage == 3) {  // Megatron-FSDP: everything sharded, one unit gathered ahead
    m.params /= c.N;
    m.grads /= c.N;
    m.gathered = (2.0 * c.w + g) * in.fsdp_unit;
  }
  const double opt = (c.master + c.s) * c.P / (in.zero_stage >= 1 ? c.N : 1);
  if (in.offload == Offload::none) {
    m.optimizer = opt;
  } else {
    m.host_per_node = kHostBufferFactor * in.gpus_per_node * opt;
  }
  return m;
}

ModelStateMemory fsdp_states(const ModelStateInputs& in, const Ctx& c) {
  ModelStateMemory m;
  const double shard = in.zero_stage >= 2 ? c.N : 1;
  // fp32 parameters and gradients beside the 16-bit compute copies; a pure 16-bit model keeps
  // 16-bit ones (and 16-bit states: model_state_memory halves c.s).
  const double p = in.pure16 ? c.w : 4;
  const double sharded = (p + p + c.s) * c.P / shard;  // params, grads, states
  const bool off = in.offload != Offload::none;
  if (in.zero_stage >= 2) {
    m.params = off ? 0 : p * c.P / shard;
    m.grads = off ? 0 : p * c.P / shard;
    m.optimizer = off ? 0 : c.s * c.P / shard;
    if (in.zero_stage == 3) {
      m.gathered = 3 * c.w * in.fsdp_unit;  // unit + prefetched unit + unit's grads
    } else {
      m.params += c.w * c.P;  // SHARD_GRAD_OP keeps params gathered fwd -> bwd
      m.gathered = c.w * in.fsdp_unit;
    }
    if (in.fsdp_version == 2 && c.N > 1) m.gathered += c.w * in.fsdp_unit;
  } else {
    m.params = p * c.P + (c.mixed && !in.pure16 ? 2 * c.P : 0);
    m.grads = p * c.P;
    m.optimizer = c.s * c.P;
  }
  // FSDP builds the full model once per node, not once per rank: torchtitan and FSDP2
  // initialise on the meta device, and FSDP1 recipes load on rank 0 and broadcast
  // (sync_module_states; HF accelerate's cpu_ram_efficient_loading). Offloaded shards are
  // per rank.
  const double host_rank = off ? sharded : 0;
  m.host_per_node = kHostBufferFactor * std::max(4 * c.P, in.gpus_per_node * host_rank);
  return m;
}

ModelStateMemory ddp_states(const ModelStateInputs& in, const Ctx& c) {
  ModelStateMemory m;
  // Under autocast fp32 parameters and gradients, and the 16-bit casts the forward makes; a
  // 16-bit model (apex O2) keeps 16-bit ones and its optimizer the fp32 master weights.
  const bool o2 = in.amp_o2 && c.mixed && !in.pure16, half = o2 || in.pure16;
  const double casts = half ? 0 : in.autocast_cast_params < 0 ? c.P : std::min(c.P, in.autocast_cast_params);
  const double w = half ? c.w : 4;
  m.params = w * c.P + (c.mixed ? 2 * casts : 0);
  m.grads = w * c.P / (in.zero_stage >= 2 ? c.N : 1);
  // ZeroRedundancyOptimizer (stage 1) hands whole parameters to ranks, largest first, each to
  // the least loaded rank: the most loaded holds at least P/N and the largest tensor.
  m.optimizer =
      (c.s + (o2 ? c.master : 0)) * (in.zero_stage >= 1 ? std::max(c.P / c.N, in.largest_module) : c.P);
  m.host_per_node = kHostBufferFactor * in.gpus_per_node * 4 * c.P;
  double step = 0;  // what the step holds beyond the states above
  if (in.grads_set_to_none && c.N == 1 && in.grad_accum == 1) {
    // One rank, no DDP reducer buckets: zero_grad(set_to_none=True) (PyTorch >= 2.0's
    // default) frees the gradients, and backward allocates them as it frees the
    // activations, so they peak only with the step. (PyTorch 1.x zeroed them in place.)
    step = m.grads;
    m.grads = 0;
  }
  if (in.grads_set_to_none && in.optimizer == Optimizer::adam) {
    // torch.optim's foreach Adam/AdamW (PyTorch >= 2.0's default on CUDA) takes the square
    // root of every exp_avg_sq in one call (torch._foreach_sqrt in _multi_tensor_adam), a
    // new fp32 list the size of the parameters this rank updates, alive until the update.
    step += (in.pure16 ? c.w : 4) * (in.zero_stage >= 1 ? std::max(c.P / c.N, in.largest_module) : c.P);
  }
  // The 16-bit casts counted in params died in backward.
  m.step_only = std::max(0.0, step - (c.mixed ? 2 * casts : 0));
  return m;
}

}  // namespace

double optimizer_state_bytes(Optimizer opt, double adafactor_bytes_per_param) {
  switch (opt) {
    case Optimizer::adam: return 8;                  // exp_avg + exp_avg_sq in fp32
    case Optimizer::sgd: return 4;                   // momentum buffer
    case Optimizer::adafactor: return adafactor_bytes_per_param;
    case Optimizer::adam_8bit: return 2 + 2 * 4.0 / 2048;  // 2 uint8 states + fp32 absmax/2048
  }
  return 8;
}

ModelStateMemory model_state_memory(const ModelStateInputs& in) {
  Ctx c;
  c.P = in.params;
  c.N = std::max(1, in.dp);
  c.mixed = in.precision != Precision::fp32;
  c.w = c.mixed ? 2 : 4;
  c.s = optimizer_state_bytes(in.optimizer, in.adafactor_bytes_per_param);
  // Pure 16-bit: torch.optim keeps the states in the parameters' dtype (8-bit Adam its own).
  if (in.pure16 && in.optimizer != Optimizer::adam_8bit) c.s /= 2;
  c.master = c.mixed ? 4 : 0;
  switch (in.framework) {
    case Framework::deepspeed: return deepspeed_states(in, c);
    case Framework::megatron: return megatron_states(in, c);
    case Framework::fsdp: return fsdp_states(in, c);
    case Framework::ddp: return ddp_states(in, c);
  }
  return deepspeed_states(in, c);
}

}  // namespace dsplan
