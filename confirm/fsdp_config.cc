// FSDP settings and launch command for `estimate --out`; see fsdp_config.h.
#include "confirm/fsdp_config.h"

#include <vector>

#include "confirm/command.h"
#include "confirm/ds_config.h"
#include "core/names.h"

namespace dsplan {

namespace {

std::string sharding_strategy(const TrainConfig& c) {
  if (c.zero_stage >= 3) return c.fsdp_hybrid ? "HYBRID_SHARD" : "FULL_SHARD";
  if (c.zero_stage == 2) return c.fsdp_hybrid ? "_HYBRID_SHARD_ZERO2" : "SHARD_GRAD_OP";
  return "NO_SHARD";
}

std::string torch_dtype(Precision p) {
  switch (p) {
    case Precision::fp16: return "float16";
    case Precision::bf16: return "bfloat16";
    default: return "float32";
  }
}

Json activation_checkpointing(const TrainConfig& c) {
  switch (c.checkpointing) {
    case Checkpointing::full:
      return {{"mode", "full"}, {"wrap", "checkpoint_wrapper on every transformer block"}};
    case Checkpointing::block:
      return {{"mode", "block"}, {"blocks_per_rank", c.recompute_layers},
              {"wrap", "checkpoint_wrapper on that many transformer blocks of each rank"}};
    case Checkpointing::selective:
      return {{"mode", "selective"}, {"wrap", "recompute the attention core only"}};
    default:
      return {{"mode", "none"}};
  }
}

}  // namespace

Json make_fsdp_config(const TrainConfig& c) {
  const bool mixed = c.precision != Precision::fp32;
  Json j;
  const std::string reduce = mixed && c.fsdp_reduce_fp32 ? "float32" : torch_dtype(c.precision);
  if (c.fsdp_version == 2) {
    // fully_shard has no sharding strategy: ZeRO-3 reshards after forward, ZeRO-2 does
    // not; hybrid is a 2-D device mesh.
    j["fsdp_version"] = 2;
    j["fully_shard"] = {{"reshard_after_forward", c.zero_stage >= 3},
                        {"mesh", c.fsdp_hybrid ? "2-D (replicate across nodes, shard within a node)"
                                               : "1-D over the data-parallel ranks"}};
    j["auto_wrap"] = "fully_shard on every transformer block, then on the model";
    j["mixed_precision"] = {{"param_dtype", torch_dtype(c.precision)}, {"reduce_dtype", reduce}};
  } else {
    j["sharding_strategy"] = sharding_strategy(c);
    j["auto_wrap"] = "one FSDP unit per transformer block (transformer_auto_wrap_policy / fully_shard per block)";
    j["backward_prefetch"] = "BACKWARD_PRE";
    j["limit_all_gathers"] = true;
    j["mixed_precision"] = {{"param_dtype", torch_dtype(c.precision)},
                            {"reduce_dtype", reduce},
                            {"buffer_dtype", torch_dtype(c.precision)}};
  }
  // FSDP's one offload mode moves parameters, gradients and the optimizer step to the host
  // (CPUOffload(offload_params=True)): what dsplan prices for any offload under FSDP.
  j["cpu_offload"] = {{"offload_params", c.offload != Offload::none}};
  j["zero_redundancy_optimizer"] = c.zero_stage == 1;
  j["activation_checkpointing"] = activation_checkpointing(c);
  j["flash_attention"] = c.flash_attention;
  if (c.gemm_precision() == Precision::tf32) j["allow_tf32"] = true;  // torch.backends.cuda.matmul
  if (c.pure16_model())  // the model itself is cast: no mixed-precision policy
    j["mixed_precision"] = {
        {"model_dtype", torch_dtype(c.precision)},
        {"policy", "none: model.to(dtype) before wrapping; optimizer states in that dtype"}};
  j["micro_batch_per_gpu"] = c.micro_batch;
  j["gradient_accumulation_steps"] = c.grad_accum;
  j["global_batch"] = c.global_batch();
  j["data_parallel_degree"] = c.dp;
  // With tp > 1 the plan is 2-D: tensor parallelism inside FSDP (torchtitan's FSDP2 with
  // DTensor TP), sequence parallel as planned.
  j["tensor_parallel_degree"] = c.tp;
  j["pipeline_parallel_degree"] = c.pp;
  j["sequence_parallel"] = c.sequence_parallel;
  j["seq_len"] = c.seq_len;
  j["optimizer"] = name(c.optimizer);
  return j;
}

std::string torchrun_launch_command(const TrainConfig& c, const Cluster& cluster,
                                    const std::string& script, const std::string& fsdp_config_path) {
  const LaunchLayout l = launch_layout(c, cluster);
  return tf32_env(c) +
         shell_join({"torchrun", "--nnodes", std::to_string(l.nodes), "--nproc_per_node",
                     std::to_string(l.gpus_per_node), script, "--fsdp_config", fsdp_config_path});
}

}  // namespace dsplan
