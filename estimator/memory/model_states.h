// Model-state memory (parameters, gradients, optimizer states) of one rank and the host
// memory its node needs, for DeepSpeed ZeRO 0-3 with offload, Megatron (with and without
// the distributed optimizer), PyTorch FSDP and DDP (torch.amp), in fp32 or mixed 16-bit.
// Bytes per parameter and what is divided by the data-parallel degree follow each
// framework's implementation; docs/model.md §3 Memory derives every term with its source.
// Pure arithmetic on doubles: no allocation, callable for every candidate of a search.
#pragma once

#include "core/train_config.h"

namespace dsplan {

struct ModelStateInputs {
  Framework framework = Framework::deepspeed;
  Precision precision = Precision::fp16;
  Optimizer optimizer = Optimizer::adam;
  int zero_stage = 0;
  Offload offload = Offload::none;
  double params = 0;          // elements this rank's replica holds (after TP/PP, before ZeRO)
  double largest_module = 0;  // elements of the largest single module on this rank
  double persistent = 0;      // ZeRO-3: elements kept unpartitioned (below the threshold)
  double fsdp_unit = 0;       // FSDP: elements of the largest wrapped unit
  int fsdp_version = 1;       // FSDP2 copies each all-gather out of its output buffer
  double adafactor_bytes_per_param = 4;  // factored second moment, from the shapes
  int dp = 1;
  int grad_accum = 1;         // micro-batches per step (ZeRO-2 holds two partitions when > 1)
  int gpus_per_node = 1;      // ranks sharing one node's host memory
  int nodes = 1;
  bool megatron_fp32_grads = true;  // TrainConfig::megatron_fp32_grads
  bool bf16_optimizer = false;      // TrainConfig::deepspeed_bf16_optimizer
  bool amp_o2 = false;              // TrainConfig::ddp_amp_o2: a 16-bit model, fp32 master
  bool pure16 = false;              // TrainConfig::pure16_model: 16-bit states, no master
  // DDP on PyTorch >= 2.0's defaults (TrainConfig::ddp_pytorch2_defaults): the loop frees
  // gradients each step, and torch.optim's step is the foreach implementation.
  bool grads_set_to_none = false;
  // DDP under torch.amp: parameters whose 16-bit casts backward keeps (saved by the
  // linears); < 0 = all. Recomputed layers keep none but the one being recomputed.
  double autocast_cast_params = -1;
};

// Bytes. gpu_gathered is ZeRO-3's gathered working set of the largest module (its 16-bit
// parameters and gradients, DeepSpeed's "largest_layer_memory") or FSDP's gathered unit.
struct ModelStateMemory {
  double params = 0;
  double grads = 0;
  double optimizer = 0;
  double gathered = 0;
  double step_only = 0;  // bytes that exist only inside the optimizer step (after backward)
  double host_per_node = 0;
  double gpu_total() const { return params + grads + optimizer + gathered; }
};

// DeepSpeed's host-memory safety factor (additional_buffer_factor) applied to host figures.
inline constexpr double kHostBufferFactor = 1.5;

// Optimizer state bytes per parameter, excluding any fp32 master copy.
double optimizer_state_bytes(Optimizer opt, double adafactor_bytes_per_param);

ModelStateMemory model_state_memory(const ModelStateInputs& in);

}  // namespace dsplan
