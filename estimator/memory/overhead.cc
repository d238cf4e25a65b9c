// CUDA context: ~287 MB with CUDA_MODULE_LOADING=LAZY vs ~667 MB eager (pytorch PR
// #86509), 300-400 MB with CUDA >= 11.7 lazy loading (hardware-and-comm.md sec. 4); we
// take 0.5 GiB including the cuBLAS workspace. Volta-era stacks (CUDA < 11.7, eager
// loading of every PyTorch kernel) measured 1343 MB on a V100 (Hugging Face
// model_memory_anatomy); the architecture stands in for the software era.
// NCCL: per channel and peer a receive buffer of Simple 4 MiB + LL128 4.69 MiB + LL
// 0.5 MiB = 9.2 MiB (NCCL src/init.cc, hardware-and-comm.md sec. 2 "Buffers"), two peers
// per channel (ring neighbour and tree parent/child), channel counts typical of NCCL's
// topology search (8 Volta, 16 Ampere, 32 Hopper). Pipeline send/recv use a quarter of it.
#include "estimator/memory/overhead.h"

#include "core/units.h"

namespace dsplan {

double cuda_context_bytes(GpuArch arch) {
  return arch == GpuArch::volta ? MB(1343).v : GiB(0.5).v;
}

double nccl_buffer_bytes(GpuArch arch, const TrainConfig& cfg) {
  const double channels = arch == GpuArch::volta ? 8 : arch == GpuArch::ampere ? 16 : 32;
  const double per_comm = channels * 2 * MiB(9.2).v;
  double comms = 0;
  if (cfg.dp > 1) comms += 1;
  if (cfg.tp > 1) comms += 1;
  if (cfg.pp > 1) comms += 0.25;
  return comms * per_comm;
}

}  // namespace dsplan
