// Memory outside the tensors a training step allocates: the CUDA context (driver state
// plus loaded PyTorch/cuBLAS kernels), NCCL communicator buffers and the PyTorch caching
// allocator's fragmentation. Figures and sources: docs/model.md §3 Memory, "Overhead".
#pragma once

#include "core/hardware_spec.h"
#include "core/train_config.h"

namespace dsplan {

// The CUDA context and the allocator's fragmentation are MemoryOptions (estimator/memory.h):
// they depend on the software stack, not on the GPU.

// NCCL buffers one rank holds for its TP, PP and DP communicators, in bytes.
double nccl_buffer_bytes(GpuArch arch, const TrainConfig& cfg);

}  // namespace dsplan
