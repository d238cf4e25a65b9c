// What a PyTorch FSDP run of a configuration needs, for `estimate --out` when the plan's
// framework is fsdp: the FSDP settings in PyTorch's own terms (fsdp_config.json) and a
// torchrun command. dsplan prices FSDP as one wrapped unit per transformer layer with
// backward prefetch; the file says so, and the mapping from dsplan's ZeRO stage:
//   3 -> FULL_SHARD (HYBRID_SHARD with hybrid sharding), 2 -> SHARD_GRAD_OP
//   (_HYBRID_SHARD_ZERO2), 0/1 -> NO_SHARD (1: with torch's ZeroRedundancyOptimizer).
// Mixed precision: parameters and compute in the 16-bit precision, gradient reduction in
// fp32 when TrainConfig::fsdp_reduce_fp32, buffers in the compute dtype. Pure: no files.
#pragma once

#include <string>

#include "core/hardware_spec.h"
#include "core/json_reader.h"
#include "core/train_config.h"

namespace dsplan {

Json make_fsdp_config(const TrainConfig& cfg);

// torchrun --nnodes N --nproc_per_node G SCRIPT --fsdp_config PATH (one node's command;
// multi-node runs add their rendezvous flags).
std::string torchrun_launch_command(const TrainConfig& cfg, const Cluster& cluster,
                                    const std::string& script, const std::string& fsdp_config_path);

}  // namespace dsplan
