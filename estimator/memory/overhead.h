// Memory outside the tensors a training step allocates: the CUDA context (driver state
// plus loaded PyTorch/cuBLAS kernels), NCCL communicator buffers and the PyTorch caching
// allocator's fragmentation. Figures and sources: docs/model.md §3 Memory, "Overhead".
#pragma once

#include "core/hardware_spec.h"
#include "core/train_config.h"

namespace dsplan {

// Caching-allocator slack: reserved = allocated x (1 + f).
inline constexpr double kAllocatorFragmentation = 0.10;

// CUDA context + kernel images + cuBLAS workspace on one GPU, in bytes.
double cuda_context_bytes(GpuArch arch);

// NCCL buffers one rank holds for its TP, PP and DP communicators, in bytes.
double nccl_buffer_bytes(GpuArch arch, const TrainConfig& cfg);

}  // namespace dsplan
