// The JSON view of an estimate (docs/manual.md, "JSON output"): the plan with its search
// statistics and assumptions, and one object per evaluated configuration. Optional keys
// appear only when they differ from the defaults the reader assumes.
#include "cli/estimate_options.h"
#include "core/json/model_json.h"
#include "core/names.h"
#include "estimator/params.h"
#include "hwdb/hwdb.h"

namespace dsplan::cli {

Json plan_to_json(const EstimatePlan& p) {
  const PlanRequest& r = p.request;
  Json j;
  j["model"] = model_to_json(r.model);
  j["model"]["params"] = total_params(r.model);
  j["hardware"] = system_to_json(r.cluster.node);
  j["hardware"]["num_gpus"] = r.cluster.num_gpus;
  j["hardware"]["nodes"] = r.cluster.nodes();
  j["assumptions"] = p.assumptions;
  j["efficiency_source"] = r.efficiency.source;
  Json rej = Json::object();
  for (const auto& [why, n] : p.result.rejections) rej[why] = n;
  Json infeasible = Json::object();
  for (const auto& [why, n] : p.result.infeasible) infeasible[why] = n;
  Json maxmbs = Json::object();
  for (const auto& [stage, b] : p.result.max_micro_batch)
    maxmbs["zero" + std::to_string(stage)] = b ? Json(*b) : Json(nullptr);  // null: stage not offered
  j["search"] = {{"evaluated", p.result.evaluated}, {"feasible", p.result.feasible},
                 {"invalid", p.result.invalid}, {"seconds", p.seconds},
                 {"metric", r.metric == Metric::throughput ? "throughput"
                            : r.metric == Metric::latency ? "latency" : "flops"},
                 {"ranked_by", p.result.time_ranked ? "predicted step time (closed form; simulator for the top "
                                   + std::to_string(r.refine_top) + ")" : "memory headroom"},
                 {"rejections", rej}, {"infeasible", infeasible}, {"max_micro_batch", maxmbs},
                 {"dominated", p.result.dominated}};
  j["configs"] = Json::array();
  for (const auto& e : p.result.configs)
    j["configs"].push_back(config_entry_json(e, r.cluster.node.gpu.arch, p.train_tokens));
  return j;
}

Json config_entry_json(const Evaluation& e, GpuArch arch, double train_tokens) {
  Json j = config_to_json(e);
  if (e.time.step.v > 0) j["evidence"] = config_evidence_json(e, arch);
  if (const Json t = training_json(e, train_tokens, arch); !t.is_null()) j["training"] = t;
  return j;
}

Json config_to_json(const Evaluation& e) {
  const TrainConfig& c = e.cfg;
  auto gib = [](Bytes b) { return in_GiB(b); };
  Json j;
  j["zero_stage"] = c.zero_stage;
  j["tp"] = c.tp;
  j["pp"] = c.pp;
  if (c.cp > 1) j["cp"] = c.cp;  // context parallelism (--cp)
  if (c.ep > 1) j["ep"] = c.ep;  // expert parallelism (--ep; MoE)
  if (c.etp > 1) j["etp"] = c.etp;  // expert tensor parallelism (--etp; MoE)
  if (c.moe_deepep) j["moe_dispatcher"] = "deepep";  // --moe-dispatcher deepep (MoE)
  if (!c.moe_permute_fusion) j["moe_permute_fusion"] = false;  // --moe-permute-fusion off (MoE)
  if (c.mtp_layers > 0) j["mtp"] = c.mtp_layers;  // multi-token prediction modules (--mtp)
  j["dp"] = c.dp;
  j["vpp"] = c.vpp;
  // Megatron's uneven split (TrainConfig::stage_layers): what counts as a layer beside them.
  if (c.pp > 1 && (c.pp_account_embedding || c.pp_account_loss))
    j["pp_split"] = c.pp_account_embedding && c.pp_account_loss ? "embedding+loss"
                    : c.pp_account_loss                         ? "loss"
                                                                : "embedding";
  if (c.pp > 1 && c.explicit_split()) {  // Megatron's explicit split: the first and last chunks' layers
    j["pp_first_layers"] = c.pp_first_layers;
    j["pp_last_layers"] = c.pp_last_layers;
  }
  j["micro_batch"] = c.micro_batch;
  j["grad_accum"] = c.grad_accum;
  j["global_batch"] = c.global_batch();
  j["seq_len"] = c.seq_len;
  j["checkpointing"] = name(c.checkpointing);
  if (c.checkpointing == Checkpointing::block) j["recompute_layers"] = c.recompute_layers;
  if (c.checkpointing == Checkpointing::selective && c.recompute_modules != 0)  // --recompute-modules
    j["recompute_modules"] = recompute_module_list(c.recompute_modules);
  j["flash_attention"] = c.flash_attention;
  j["sequence_parallel"] = c.sequence_parallel;
  j["overlap_comm"] = c.zero.overlap_comm < 0 ? "default" : c.zero.overlap_comm == 1 ? "on" : "off";
  j["offload"] = name(c.offload);
  if (c.cpu_offload_layers > 0) j["cpu_offload_layers"] = c.cpu_offload_layers;  // Megatron's activations
  if (c.ds_partitions_checkpoints()) j["partition_activations"] = true;  // DeepSpeed's checkpoint options
  if (c.ds_checkpoints_on_host()) j["cpu_checkpointing"] = true;
  if (c.logit_metrics > 0) j["logit_metrics"] = c.logit_metrics;
  if (c.cross_entropy != CrossEntropy::eager) j["cross_entropy"] = name(c.cross_entropy);
  if (c.norm_kernel != NormKernel::auto_) j["norm_kernel"] = name(c.norm_kernel);
  if (c.framework == Framework::megatron && !c.megatron_fp32_grads) j["grad_reduce_in_fp32"] = false;
  if (c.framework == Framework::fsdp && c.fsdp_reduce_fp32) j["grad_reduce_in_fp32"] = true;
  if (c.framework == Framework::fsdp && c.fsdp_hybrid) j["fsdp_sharding"] = "hybrid";
  if (c.framework == Framework::fsdp && c.fsdp_version == 2) j["fsdp_version"] = 2;
  if (c.flash_attention && c.attention != AttentionKernel::auto_) j["attention_kernel"] = name(c.attention);
  // fp8, nvfp4: bf16 with FP8 or NVFP4 linears
  j["precision"] = precision_flag(c);
  if (c.fp8 && !c.nvfp4()) j["fp8_recipe"] = name(c.fp8_recipe);
  j["framework"] = name(c.framework);
  j["optimizer"] = name(c.optimizer);
  j["fits"] = e.fits && e.reasons.empty();
  j["reasons"] = e.reasons;
  const MemoryBreakdown& m = e.memory;
  j["memory"] = {{"allocated_gib", gib(m.allocated)}, {"reserved_gib", gib(m.reserved)},
                 {"device_gib", gib(m.device)}, {"host_gib", gib(m.host)},
                 {"headroom_gib", gib(e.headroom)},
                 {"breakdown", {{"params_gib", gib(m.params)}, {"grads_gib", gib(m.grads)},
                                {"optimizer_gib", gib(m.optimizer)}, {"activations_gib", gib(m.activations)},
                                {"buffers_gib", gib(m.buffers)}, {"overhead_gib", gib(m.overhead)}}}};
  const StepTimeBreakdown& t = e.time;
  j["time"] = {{"step_s", t.step.v}, {"compute_s", t.compute.v}, {"comm_exposed_s", t.comm_exposed.v},
               {"bubble_s", t.bubble.v}, {"optimizer_s", t.optimizer.v}, {"offload_s", t.offload.v},
               {"contention_s", t.contention.v}, {"source", e.simulated ? "simulator" : "closed-form"}};
  j["throughput"] = {{"samples_per_s", e.samples_per_s}, {"tokens_per_s", e.tokens_per_s},
                     {"tflops_per_gpu", e.tflops_per_gpu}, {"hw_tflops_per_gpu", e.hw_tflops_per_gpu},
                     {"mfu", e.mfu}};
  return j;
}

}  // namespace dsplan::cli
