// Per-GPU memory of one training configuration on the most loaded rank, as a breakdown.
// Three totals because published measurements use all three:
//   allocated = params + grads + optimizer + activations + buffers
//               (what torch.cuda.max_memory_allocated reports at its peak),
//   reserved  = allocated + caching-allocator fragmentation (the allocator's peak),
//   device    = reserved + CUDA context + NCCL buffers (what nvidia-smi shows).
// `overhead` is device - allocated, so the six breakdown fields sum to `device`.
// Formulas and sources: docs/model.md §3 Memory.
#pragma once

#include <string>
#include <vector>

#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/train_config.h"
#include "core/units.h"
#include "estimator/params.h"

namespace dsplan {

struct MemoryBreakdown {
  Bytes params;
  Bytes grads;
  Bytes optimizer;
  Bytes activations;
  Bytes buffers;   // DeepSpeed/FSDP/DDP communication buckets, ZeRO-3 live/prefetched params
  Bytes overhead;  // fragmentation + CUDA context + NCCL buffers
  Bytes allocated;
  Bytes reserved;
  Bytes device;
  Bytes host;      // host (CPU) memory the configuration needs per node (offload)
};

// Inputs that describe the software stack rather than the model or the GPU. The CUDA
// context depends on the CUDA/PyTorch version (lazy module loading since CUDA 11.7), not
// on the GPU generation: 0.5 GiB for CUDA >= 11.7 lazy loading (context + cuBLAS
// workspace), ~1343 MB measured with eager loading (docs/model.md §3 "Overhead").
struct MemoryOptions {
  Bytes cuda_context = GiB(0.5);
  double fragmentation = 0.10;  // caching-allocator slack: reserved = allocated x (1 + f)
};

// Bytes one transformer layer keeps for its backward on a rank, per micro-batch: what
// activation offloading (TrainConfig::cpu_offload_layers) moves to the host and back.
double layer_saved_activation_bytes(const ModelSpec& m, const TrainConfig& cfg);
// Bytes of a recomputed layer's input on a rank, per micro-batch, before DeepSpeed's
// partition_activations splits it: what that option gathers and cpu_checkpointing moves.
double layer_checkpoint_input_bytes(const ModelSpec& m, const TrainConfig& cfg);

// Memory model with per-model precomputation. estimate() is a pure function of its
// argument; the object is cheap to copy and holds no references to its inputs.
class MemoryModel {
 public:
  MemoryModel(const ModelSpec& model, const Cluster& cluster, MemoryOptions options = {});
  MemoryBreakdown estimate(const TrainConfig& cfg) const;

 private:
  ModelSpec model_;
  Cluster cluster_;
  MemoryOptions options_;
  ParamCounts counts_;  // count_params(model_), once: estimate() runs per configuration
};

}  // namespace dsplan
