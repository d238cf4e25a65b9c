// Turning one dsplan TrainConfig into what the training frameworks read: a DeepSpeed
// ds_config JSON, an experiment name in the DeepSpeed autotuner's style, Megatron-LM
// command-line flags, and a `deepspeed` launcher command line. Pure functions: no files.
//
// Assumptions (docs/confirm.md, "ds_config generation"):
//  - train_batch_size = micro_batch x grad_accum x dp (DeepSpeed checks exactly this).
//  - offload_param is only emitted for ZeRO-3 (DeepSpeed accepts it nowhere else);
//    offload_optimizer needs ZeRO >= 1, so stage 0 never gets an offload block.
//  - adam-8bit is a bitsandbytes optimizer that DeepSpeed cannot build from its config:
//    no "optimizer" block is written and the script must pass the optimizer itself
//    (ds_config_notes() says so).
#pragma once

#include <string>
#include <vector>

#include "core/hardware_spec.h"
#include "core/json_reader.h"
#include "core/model_spec.h"
#include "core/train_config.h"

namespace dsplan {

// The DeepSpeed configuration for `cfg` (without an "autotuning" section).
Json make_ds_config(const TrainConfig& cfg, const ModelSpec& model);

// Human-readable caveats about the generated config (e.g. optimizers DeepSpeed cannot
// build from JSON, offload requested at a stage that cannot offload). Empty when none.
std::vector<std::string> ds_config_notes(const TrainConfig& cfg);

// "z1_tp1_pp1_gas1_tmbspg4", extended only by non-default dsplan dimensions, in this
// order: _vpp2 _cksel|_ckfull _flash _sp _offopt|_offall _fp16|_fp32 _sgd|_adafactor|_adam8bit
// _megatron|_fsdp|_ddp.
std::string experiment_name(const TrainConfig& cfg);

// Megatron-LM (and Megatron-DeepSpeed) flags for the parallel layout, batch, recompute,
// precision and model shape of `cfg`.
// `arch`: the GPUs' (a Megatron-LM plan on Volta takes --transformer-impl local: Transformer
// Engine supports Ampere and later).
std::vector<std::string> megatron_args(const TrainConfig& cfg, const ModelSpec& model,
                                       GpuArch arch = GpuArch::hopper);
// What of the model megatron_args cannot say with Megatron-LM's flags (GeGLU, post-norms,
// full-width query/key norms, sliding windows, soft caps, ALiBi; for Megatron-DeepSpeed,
// framework deepspeed, also Q/K/V-only biases and query/key norms), one phrase each: a
// Megatron run of those flags trains a different block. Empty when the flags describe it.
std::vector<std::string> megatron_args_gaps(const ModelSpec& model,
                                            Framework framework = Framework::megatron);

// Hosts a launcher starts for `cfg` on `cluster`, and GPUs on each (fewer than a host's
// when the job is smaller than one host). A host is the node unless the system says
// otherwise (gpus_per_host: a GB200 NVL72 node is 18 hosts of 4 GPUs).
struct LaunchLayout {
  int nodes = 1;
  int gpus_per_node = 1;
};
LaunchLayout launch_layout(const TrainConfig& cfg, const Cluster& cluster);
// The same for `gpus` GPUs on hosts of `gpus_per_host` (at least 1 is used).
LaunchLayout launch_layout(int gpus, int gpus_per_host);
// "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 " before a launch command whose plan runs fp32 on TF32
// tensor cores (TrainConfig::tf32), "" otherwise.
std::string tf32_env(const TrainConfig& c);

// "deepspeed --num_nodes N --num_gpus G script args... --deepspeed --deepspeed_config PATH",
// each word quoted for a POSIX shell when it needs it. When `script_args` already carry
// --deepspeed_config (or --deepspeed followed by a path) its value is replaced instead.
std::string deepspeed_launch_command(const TrainConfig& cfg, const Cluster& cluster,
                                     const std::string& script,
                                     const std::vector<std::string>& script_args,
                                     const std::string& ds_config_path);

// Quotes one word for a POSIX shell ('...' when it holds anything but [A-Za-z0-9_@%+=:,./-]).
// launch.sh of a Megatron-LM plan (framework megatron): torchrun of pretrain_gpt.py with
// megatron_args.txt, and CUDA_DEVICE_MAX_CONNECTIONS=1 where Megatron-LM asserts it.
std::string megatron_launch_script(const TrainConfig& cfg, const Cluster& cluster);
std::string shell_quote(const std::string& word);

}  // namespace dsplan
