// NCCL buffers (the CUDA context is MemoryOptions::cuda_context, estimator/memory.h).
// NCCL: per channel and peer a receive buffer of Simple 4 MiB + LL128 4.69 MiB + LL
// 0.5 MiB = 9.2 MiB (NCCL src/init.cc, hardware-and-comm.md sec. 2 "Buffers"), two peers
// per channel (ring neighbour and tree parent/child), channel counts typical of NCCL's
// topology search (8 Volta, 16 Ampere, 32 Hopper; Blackwell taken as Hopper). Pipeline send/recv
// use a quarter of it.
#include "estimator/memory/overhead.h"

#include "core/units.h"

namespace dsplan {

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
