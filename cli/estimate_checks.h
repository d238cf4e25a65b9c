// Checks of the estimate flags against the model and cluster, each refusal a diagnostic
// naming the flag and the allowed values (estimate_options.cc reads the flags): the TP and
// PP degrees, Megatron's explicit pipeline split, the precisions only some GPUs and frameworks run,
// and the size of the search space.
#pragma once

#include <string>
#include <vector>

#include "cli/estimate_options.h"
#include "core/diagnostic.h"
#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/train_config.h"
#include "estimator/search/space.h"

namespace dsplan::cli {

inline Diagnostic flag_error(const std::string& flag, const std::string& msg, const std::string& hint) {
  return Diagnostic{"", "--" + flag, msg, hint};
}

// --pp-first-layers and --pp-last-layers into `run` (both or neither; Megatron only).
void set_explicit_split(const EstimateOptions& o, const Expected<ModelSpec>& model, TrainConfig& run,
                        Diagnostics& errs);
// User-given TP and PP degrees that the model, cluster or run's split cannot take.
void check_degrees(const std::vector<int>& tps, const std::vector<int>& pps, const ModelSpec& m,
                   const Cluster& c, const TrainConfig& run, Diagnostics& errs);
// --cpu-offload-layers into `run`: Megatron only, fewer than the model's layers.
void set_cpu_offload(const EstimateOptions& o, const Expected<ModelSpec>& model, TrainConfig& run,
                     Diagnostics& errs);
// --partition-activations and --cpu-checkpointing into `run`: on or off; DeepSpeed only, and
// only with layer recompute among the searched --ckpt values (empty: the default search).
void set_ds_checkpointing(const EstimateOptions& o, const std::vector<Checkpointing>& ckpt, TrainConfig& run,
                          Diagnostics& errs);
// --precision tf32 and bf16-pure into `s.run`: refused without TF32 tensor cores, and outside
// PyTorch DDP and FSDP, respectively.
void tf32_matmuls(SearchSpace& s, const GpuSpec& gpu, Diagnostics& errs);
void pure_bf16(SearchSpace& s, Diagnostics& errs);
// A space too large to search at once, with the widest flag to narrow.
void check_space_size(const SearchSpace& given, const ModelSpec& m, const Cluster& c, Diagnostics& errs);

}  // namespace dsplan::cli
