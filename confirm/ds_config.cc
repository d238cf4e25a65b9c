// ds_config / Megatron flags / launcher command for one TrainConfig (see ds_config.h).
// Key names follow DeepSpeed's documented configuration (deepspeed.ai/docs/config-json)
// and Megatron-LM's arguments.py; the values are dsplan's, the defaults DeepSpeed's.
#include "confirm/ds_config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>

#include "confirm/command.h"
#include "core/names.h"

namespace dsplan {
namespace {

// Bucket sizes are element counts; DeepSpeed wants integers.
std::int64_t elems(double v) { return static_cast<std::int64_t>(std::llround(v)); }

Json precision_blocks(Precision p) {
  Json out = Json::object();
  if (p == Precision::fp16) {
    // loss_scale 0 = dynamic loss scaling, DeepSpeed's defaults for the rest.
    out["fp16"] = {{"enabled", true},       {"loss_scale", 0}, {"loss_scale_window", 1000},
                   {"initial_scale_power", 16}, {"hysteresis", 2}, {"min_loss_scale", 1}};
  } else if (p == Precision::bf16) {
    out["bf16"] = {{"enabled", true}};
  }
  return out;
}

Json zero_block(const TrainConfig& c) {
  const int s = c.zero_stage;
  Json z = {{"stage", s},
            {"overlap_comm", c.zero.overlap(s)},
            {"contiguous_gradients", c.zero.contiguous_gradients},
            {"reduce_bucket_size", elems(c.zero.reduce_bucket_elems)}};
  if (s >= 1 && s <= 2) {
    z["allgather_partitions"] = true;
    z["allgather_bucket_size"] = elems(c.zero.allgather_bucket_elems);
    z["reduce_scatter"] = true;
  }
  if (s == 3) {
    z["stage3_prefetch_bucket_size"] = elems(c.zero.prefetch_bucket_elems);
    z["stage3_max_live_parameters"] = elems(c.zero.max_live_params);
    z["stage3_max_reuse_distance"] = elems(c.zero.max_live_params);
    z["stage3_param_persistence_threshold"] = elems(c.zero.param_persistence_threshold);
  }
  const Json cpu = {{"device", "cpu"}, {"pin_memory", true}};
  if (c.offload != Offload::none && s >= 1) z["offload_optimizer"] = cpu;
  if (c.offload == Offload::all && s == 3) z["offload_param"] = cpu;
  return z;
}

// DeepSpeed's checkpoint options as the plan priced them (Megatron-DeepSpeed passes its flags,
// below, which override these keys).
Json checkpoint_block(const TrainConfig& c, const ModelSpec& m) {
  // DeepSpeed asserts contiguous checkpointing only with partitioned activations
  // (activation_checkpointing/checkpointing.py, configure).
  return {{"partition_activations", c.ds_partitions_checkpoints()},
          {"contiguous_memory_optimization", c.ds_partitions_checkpoints()},
          {"number_checkpoints",
           c.checkpointing == Checkpointing::block ? c.recompute_layers : c.stage_layers(m.layers).most()},
          {"cpu_checkpointing", c.ds_checkpoints_on_host()},
          {"synchronize_checkpoint_boundary", false},
          {"profile", false}};
}

// Adam(W) hyper-parameters are the usual GPT pre-training ones (betas 0.9/0.95).
Json optimizer_block(Optimizer o) {
  switch (o) {
    case Optimizer::adam:
      return {{"type", "AdamW"},
              {"params", {{"lr", 1e-4}, {"betas", {0.9, 0.95}}, {"eps", 1e-8},
                          {"weight_decay", 0.01}}}};
    case Optimizer::sgd:  // not a DeepSpeed optimizer: the engine falls back to torch.optim.SGD
      return {{"type", "SGD"}, {"params", {{"lr", 1e-3}, {"momentum", 0.9}}}};
    case Optimizer::adafactor:  // torch.optim.Adafactor (PyTorch >= 2.5), same fallback
      return {{"type", "Adafactor"}, {"params", {{"lr", 1e-2}}}};
    case Optimizer::adam_8bit:
      return nullptr;
  }
  return nullptr;
}

}  // namespace

Json make_ds_config(const TrainConfig& c, const ModelSpec& m) {
  Json ds = {{"train_batch_size", c.global_batch()},
             {"train_micro_batch_size_per_gpu", c.micro_batch},
             {"gradient_accumulation_steps", c.grad_accum}};
  ds.update(precision_blocks(c.precision));
  ds["zero_optimization"] = zero_block(c);
  if (c.checkpointing != Checkpointing::none) ds["activation_checkpointing"] = checkpoint_block(c, m);
  if (Json opt = optimizer_block(c.optimizer); !opt.is_null()) ds["optimizer"] = opt;
  // ZeRO asserts on an optimizer outside its tested list (Adam(W), Lamb, ...) unless told
  // (runtime/engine.py, zero/utils.py ZERO_SUPPORTED_OPTIMIZERS).
  if (c.zero_stage >= 1 && c.optimizer != Optimizer::adam) ds["zero_allow_untested_optimizer"] = true;
  ds["gradient_clipping"] = 1.0;
  ds["steps_per_print"] = 100;
  ds["wall_clock_breakdown"] = false;
  return ds;
}

std::vector<std::string> ds_config_notes(const TrainConfig& c) {
  std::vector<std::string> notes;
  if (c.optimizer == Optimizer::adam_8bit)
    notes.push_back("adam-8bit is bitsandbytes' Adam8bit: no \"optimizer\" block is written; "
                    "the script must create it and pass it to deepspeed.initialize");
  if (c.optimizer == Optimizer::adafactor)
    notes.push_back("\"Adafactor\" is built from torch.optim (PyTorch >= 2.5)");
  if (c.offload != Offload::none && c.zero_stage == 0)
    notes.push_back("ZeRO stage 0 cannot offload: no offload block is written");
  if (c.offload == Offload::all && c.zero_stage != 3)
    notes.push_back("parameter offload needs ZeRO stage 3: only the optimizer is offloaded");
  return notes;
}

std::string experiment_name(const TrainConfig& c) {
  std::ostringstream s;
  s << 'z' << c.zero_stage << "_tp" << c.tp << "_pp" << c.pp << "_gas" << c.grad_accum
    << "_tmbspg" << c.micro_batch;
  if (c.vpp > 1) s << "_vpp" << c.vpp;
  if (c.cp > 1) s << "_cp" << c.cp;  // plans differing only in context parallelism
  if (c.ep > 1) s << "_ep" << c.ep;  // MoE: plans differing only in expert parallelism
  if (c.moe_deepep) s << "_deepep";
  if (c.checkpointing == Checkpointing::selective) s << "_cksel";
  if (c.checkpointing == Checkpointing::selective && c.recompute_modules != 0)
    s << "-" << recompute_modules_text(c.recompute_modules, '-');
  if (c.checkpointing == Checkpointing::full) s << "_ckfull";
  if (c.checkpointing == Checkpointing::block) s << "_ckblock" << c.recompute_layers;
  if (c.flash_attention) s << "_flash";
  if (c.sequence_parallel) s << "_sp";
  if (c.offload == Offload::optimizer) s << "_offopt";
  if (c.offload == Offload::all) s << "_offall";
  if (c.precision == Precision::fp16) s << "_fp16";
  if (c.precision == Precision::fp32) s << (c.tf32 ? "_tf32" : "_fp32");
  if (c.fp8) s << (c.nvfp4() ? "_nvfp4" : "_fp8");
  if (c.optimizer == Optimizer::sgd) s << "_sgd";
  if (c.optimizer == Optimizer::adafactor) s << "_adafactor";
  if (c.optimizer == Optimizer::adam_8bit) s << "_adam8bit";
  if (c.framework == Framework::megatron) s << "_megatron";
  if (c.framework == Framework::fsdp) s << "_fsdp";
  if (c.framework == Framework::ddp) s << "_ddp";
  return s.str();
}

// Megatron-LM's --window-attn-skip-freq N: one full-attention layer after every N - 1
// windowed ones; 0 where every layer windows, nullopt where the share is no such ratio.
static std::optional<int> megatron_window_skip(const ModelSpec& m) {
  const int full = m.layers - windowed_layers_of(m);
  if (full == 0) return 0;
  if (full < 0 || m.layers % full != 0) return std::nullopt;
  return m.layers / full;
}

std::vector<std::string> megatron_args_gaps(const ModelSpec& m, Framework f) {
  std::vector<std::string> gaps;
  if (f == Framework::deepspeed && !m.linear_bias && m.qkv_bias)
    gaps.push_back("biases on Q, K and V alone (Megatron-DeepSpeed has no --add-qkv-bias)");
  if (f == Framework::deepspeed && m.qk_norm) gaps.push_back("query and key norms (no --qk-layernorm)");
  if (m.position == PositionKind::alibi) gaps.push_back("ALiBi position biases");
  if (m.gated_mlp && m.activation != Activation::silu) gaps.push_back("a gated GELU MLP (--swiglu is SiLU)");
  if (m.norms_per_layer == 4) gaps.push_back("norms after each sublayer");
  if (m.qk_norm && m.qk_norm_full_width)
    gaps.push_back("query and key norms over all heads (--qk-layernorm is per head)");
  if (const int w = windowed_layers_of(m); w > 0 && (f == Framework::deepspeed || !megatron_window_skip(m)))
    gaps.push_back(f == Framework::deepspeed ? "the sliding window (Megatron-DeepSpeed has no window flags)"
                                             : "which layers slide their window (not a whole-number ratio)");
  if (m.logit_softcap || m.attn_softcap) gaps.push_back("soft-capped logits or attention scores");
  return gaps;
}

std::vector<std::string> megatron_args(const TrainConfig& c, const ModelSpec& m, GpuArch arch) {
  auto str = [](auto v) { return std::to_string(v); };
  std::vector<std::string> a = {"--tensor-model-parallel-size",
                                str(c.tp),
                                "--pipeline-model-parallel-size",
                                str(c.pp),
                                "--micro-batch-size",
                                str(c.micro_batch),
                                "--global-batch-size",
                                str(c.global_batch()),
                                "--num-layers",
                                str(m.layers),
                                "--hidden-size",
                                str(m.hidden),
                                "--num-attention-heads",
                                str(m.heads),
                                "--seq-length",
                                str(c.seq_len),
                                "--max-position-embeddings",
                                str(std::max(m.max_positions, c.seq_len))};  // both assert >= seq
  if (m.ffn_hidden > 0) a.insert(a.end(), {"--ffn-hidden-size", str(m.ffn_hidden)});
  if (m.vocab > 0)
    a.insert(a.end(), {"--vocab-size", str(m.vocab), "--make-vocab-size-divisible-by",
                       str(std::max(1, m.vocab_pad_multiple))});
  // Megatron trains with 0.1 dropout unless told otherwise; the plan priced has_dropout().
  const std::string drop = has_dropout(m) ? "0.1" : "0";
  a.insert(a.end(), {"--hidden-dropout", drop, "--attention-dropout", drop});
  // Megatron-DeepSpeed (framework deepspeed) spells GQA, RMSNorm and rotary its own way.
  const bool mds = c.framework == Framework::deepspeed;
  if (m.kv_heads > 0 && m.kv_heads < m.heads) {
    if (mds)
      a.insert(a.end(), {"--num-key-value-heads", str(m.kv_heads)});
    else
      a.insert(a.end(), {"--group-query-attention", "--num-query-groups", str(m.kv_heads)});
  }
  if (m.gated_mlp && m.activation == Activation::silu) a.push_back("--swiglu");
  if (m.norm == NormKind::rmsnorm) a.insert(a.end(), {"--normalization", mds ? "rmsnorm" : "RMSNorm"});
  if (m.position == PositionKind::rotary) {
    if (mds)
      a.push_back("--use-rotary-position-embeddings");
    else
      a.insert(a.end(), {"--position-embedding-type", "rope"});
  }
  if (!m.tied_embeddings) a.push_back("--untie-embeddings-and-output-weights");
  if (!m.linear_bias) a.push_back("--disable-bias-linear");
  // Qwen2's biases on Q, K, V only and Qwen3's query and key norms: Megatron-LM flags
  // (Megatron-DeepSpeed has neither: megatron_args_gaps).
  if (!mds && !m.linear_bias && m.qkv_bias) a.push_back("--add-qkv-bias");
  if (!mds && m.qk_norm) a.push_back("--qk-layernorm");
  // Megatron's head width defaults to hidden / heads; Gemma's and Qwen3-0.6B's is wider.
  if (m.heads > 0 && head_dim_of(m) * m.heads != m.hidden)
    a.insert(a.end(), {"--kv-channels", str(head_dim_of(m))});
  // An uneven split counts the embedding and/or the loss as a layer (TrainConfig::
  // stage_layers); Megatron then counts those units per virtual stage too.
  // Megatron-DeepSpeed balances the two embeddings as layers with its partition method.
  // Megatron-DeepSpeed builds its pipeline model (GPTModelPipe) unless told otherwise, and
  // DeepSpeed's pipeline engine refuses ZeRO-2/3 and ignores block recompute.
  if (mds && c.pp == 1) a.push_back("--no-pipeline-parallel");
  if (c.pp > 1 && mds && c.pp_account_embedding && c.pp_account_loss)
    a.insert(a.end(), {"--pp-partition-method", "type:transformer|embedding"});
  if (c.pp > 1 && !mds && c.pp_account_embedding) a.push_back("--account-for-embedding-in-pipeline-split");
  if (c.pp > 1 && !mds && c.pp_account_loss) a.push_back("--account-for-loss-in-pipeline-split");
  const int units = m.layers + (c.pp > 1 ? c.pp_account_embedding + c.pp_account_loss : 0);
  // An explicit split's chunks differ in size: Megatron takes the chunk count per rank then.
  if (c.vpp > 1 && c.pp > 1 && c.explicit_split())
    a.insert(a.end(), {"--num-virtual-stages-per-pipeline-rank", str(c.vpp)});
  else if (c.vpp > 1 && c.pp > 1)
    a.insert(a.end(), {"--num-layers-per-virtual-pipeline-stage", str(units / (c.pp * c.vpp))});
  if (c.cp > 1) a.insert(a.end(), {"--context-parallel-size", str(c.cp)});
  // Megatron-LM's sliding window: (keys before the query, after), and which layers keep full
  // attention (Megatron-Bridge writes gpt-oss's 128-key window as 127,0 with skip freq 2).
  if (const auto skip = megatron_window_skip(m); !mds && windowed_layers_of(m) > 0 && skip) {
    a.insert(a.end(), {"--window-size", str(m.attention_window - 1) + ",0"});
    if (*skip > 0) a.insert(a.end(), {"--window-attn-skip-freq", str(*skip)});
  }
  if (c.mtp_layers > 0) a.insert(a.end(), {"--mtp-num-layers", str(c.mtp_layers)});
  if (c.pp > 1 && c.explicit_split())
    a.insert(a.end(), {"--decoder-first-pipeline-num-layers", str(c.pp_first_layers),
                       "--decoder-last-pipeline-num-layers", str(c.pp_last_layers)});
  if (is_mla(m)) {
    // --qk-layernorm: with MLA, the latents' RMSNorms (DeepSeek's q_a_layernorm, kv_a_layernorm).
    a.insert(a.end(), {"--multi-latent-attention", "--qk-layernorm", "--kv-lora-rank", str(m.kv_lora_rank),
                       "--qk-head-dim", str(head_dim_of(m)), "--qk-pos-emb-head-dim", str(m.qk_rope_head_dim),
                       "--v-head-dim", str(v_head_dim_of(m))});
    if (m.q_lora_rank > 0) a.insert(a.end(), {"--q-lora-rank", str(m.q_lora_rank)});
  }
  if (is_moe(m)) {
    // The MoE layer dsplan priced (docs/model.md §4.11): dropless top-k routing, the
    // all-to-all dispatcher, grouped expert GEMMs, expert tensor parallelism 1, and the
    // permutation as priced: Transformer Engine's fused kernels unless the plan priced
    // Megatron-Core's unfused default (--moe-permute-fusion off), which adds rows with atomics.
    a.insert(a.end(),
             {"--num-experts", str(m.experts), "--moe-router-topk", str(m.topk), "--moe-ffn-hidden-size",
              str(m.moe_ffn), "--expert-model-parallel-size", str(std::max(1, c.ep)),
              "--expert-tensor-parallel-size", str(std::max(1, c.etp)), "--moe-token-dispatcher-type",
              c.moe_deepep ? "flex" : "alltoall", "--moe-grouped-gemm"});
    if (c.moe_permute_fusion) a.push_back("--moe-permute-fusion");
    if (c.moe_deepep) a.push_back("--moe-enable-deepep");
    if (m.moe_groups > 1 && m.moe_group_topk > 0)
      a.insert(a.end(), {"--moe-router-num-groups", str(m.moe_groups), "--moe-router-group-topk",
                         str(m.moe_group_topk)});
    if (m.shared_ffn > 0) a.insert(a.end(), {"--moe-shared-expert-intermediate-size", str(m.shared_ffn)});
    if (has_dense_layers(m)) {
      // Which layers are MoE, as the per-layer list Megatron evaluates (1 = MoE, 0 = dense).
      std::string pattern = "[";
      for (int i = 0; i < m.layers; ++i)
        pattern += std::string(i ? "," : "") + (is_moe_layer(m, i) ? "1" : "0");
      a.insert(a.end(), {"--moe-layer-freq", pattern + "]"});
    }
  }
  if (c.checkpointing == Checkpointing::selective && c.recompute_modules == 0)
    a.push_back("--recompute-activations");
  if (c.checkpointing == Checkpointing::selective && c.recompute_modules != 0) {
    a.insert(a.end(), {"--recompute-granularity", "selective", "--recompute-modules"});
    const std::vector<std::string> modules = recompute_module_list(c.recompute_modules);
    a.insert(a.end(), modules.begin(), modules.end());
  }
  if (c.checkpointing == Checkpointing::full)
    a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "uniform",
                       "--recompute-num-layers", "1"});
  if (c.checkpointing == Checkpointing::block)
    a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "block",
                       "--recompute-num-layers", str(c.recompute_layers)});
  if (c.sequence_parallel) a.push_back("--sequence-parallel");
  // Megatron-DeepSpeed names the Triton kernel with its own flag.
  // In Megatron-DeepSpeed --use-flash-attn is FlashAttention v1; dsplan prices v2 there.
  if (c.flash_attention)
    a.push_back(c.attention == AttentionKernel::triton ? "--use-flash-attn-triton"
                : mds                                  ? "--use-flash-attn-v2"
                                                       : "--use-flash-attn");
  // Megatron-Core's backend choice, when the plan pins a kernel (auto leaves it to TE).
  if (c.flash_attention && c.attention == AttentionKernel::cudnn)
    a.insert(a.end(), {"--attention-backend", "fused"});
  if (c.flash_attention && (c.attention == AttentionKernel::fa2 || c.attention == AttentionKernel::fa3))
    a.insert(a.end(), {"--attention-backend", "flash"});
  if (c.optimizer == Optimizer::sgd) a.insert(a.end(), {"--optimizer", "sgd"});  // both accept it
  if (c.precision == Precision::fp16) a.push_back("--fp16");
  if (c.precision == Precision::bf16) a.push_back("--bf16");
  // Transformer Engine's FP8 as dsplan prices it (TrainConfig::fp8): the hybrid format (E4M3
  // forward, E5M2 gradients; MXFP8 runs E4M3 throughout, as Megatron-Bridge sets it), and for
  // delayed scaling its amax history (the other recipes keep none). NVFP4 takes Megatron's
  // FP4 flags instead (--fp4-format and --fp8-format exclude each other).
  if (c.nvfp4()) {
    a.insert(a.end(), {"--fp4-format", "e2m1", "--fp4-recipe", "nvfp4"});
    if (c.fp8_param_gather()) a.push_back("--fp4-param-gather");
  } else if (c.fp8) {
    a.insert(a.end(), {"--fp8-format", c.fp8_recipe == Fp8Recipe::mxfp8 ? "e4m3" : "hybrid"});
  }
  if (c.fp8 && c.fp8_recipe == Fp8Recipe::delayed)
    a.insert(a.end(), {"--fp8-amax-history-len", "1024", "--fp8-amax-compute-algo", "max"});
  if (c.fp8 && !c.nvfp4() && c.fp8_recipe != Fp8Recipe::delayed)
    a.insert(a.end(), {"--fp8-recipe", name(c.fp8_recipe)});
  if (c.fp8_param_gather() && !c.nvfp4()) a.push_back("--fp8-param-gather");
  if (c.framework == Framework::deepspeed) a.insert(a.end(), {"--zero-stage", str(c.zero_stage)});
  if (c.framework == Framework::megatron && c.zero_stage >= 1) a.push_back("--use-distributed-optimizer");
  if (c.framework == Framework::megatron && arch == GpuArch::volta)
    a.insert(a.end(), {"--transformer-impl", "local"});  // TE needs Ampere or later
  // A 16-bit gradient buffer and reduction (bf16 otherwise forces fp32: arguments.py), and
  // Megatron-Core's jit-fused cross-entropy, where the plan priced them.
  if (c.framework == Framework::megatron && c.precision == Precision::bf16 && !c.megatron_fp32_grads)
    a.push_back("--grad-reduce-in-bf16");
  if (c.framework == Framework::megatron && c.cross_entropy == CrossEntropy::jit_fused)
    a.push_back("--cross-entropy-loss-fusion");
  if (c.cpu_offload_layers > 0) a.insert(a.end(), {"--cpu-offloading-num-layers", str(c.cpu_offload_layers)});
  if (c.ds_partitions_checkpoints() || c.ds_checkpoints_on_host()) {  // deepspeed.checkpointing
    a.push_back("--deepspeed-activation-checkpointing");
    if (c.ds_partitions_checkpoints()) a.push_back("--partition-activations");
    if (c.ds_checkpoints_on_host()) a.push_back("--checkpoint-in-cpu");
  }
  if (c.megatron_fsdp())  // Megatron-FSDP v1 runs on the distributed optimizer
    a.insert(a.end(), {"--use-megatron-fsdp", "--data-parallel-sharding-strategy", "optim_grads_params",
                       "--ckpt-format", "fsdp_dtensor"});
  if (c.megatron_overlap() || c.megatron_fsdp()) {  // Megatron-FSDP is priced overlapped
    a.push_back("--overlap-grad-reduce");
    if (c.zero_stage >= 1) a.push_back("--overlap-param-gather");
  }
  return a;
}

// fp32 on TF32 tensor cores: PyTorch's override of allow_tf32 for cuBLAS (NGC containers set it).
std::string tf32_env(const TrainConfig& c) {
  return c.gemm_precision() == Precision::tf32 ? "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 " : "";
}

LaunchLayout launch_layout(int gpus, int gpus_per_host) {
  const int per_host = std::max(1, gpus_per_host);
  return {(gpus + per_host - 1) / per_host, gpus < per_host ? gpus : per_host};
}

LaunchLayout launch_layout(const TrainConfig& c, const Cluster& cluster) {
  // The launcher's unit is a host: a GB200 NVL72 node is 18 trays of 4 GPUs.
  return launch_layout(c.gpus(), cluster.node.launcher_gpus());
}

std::string deepspeed_launch_command(const TrainConfig& c, const Cluster& cluster,
                                     const std::string& script,
                                     const std::vector<std::string>& script_args,
                                     const std::string& ds_config_path) {
  const LaunchLayout l = launch_layout(c, cluster);
  std::vector<std::string> argv = {"deepspeed", "--num_nodes", std::to_string(l.nodes),
                                   "--num_gpus", std::to_string(l.gpus_per_node), script};
  // Several hosts: the launcher reads them from a hostfile (one "host slots=N" line each),
  // and refuses --num_nodes > 1 without one (launcher/runner.py).
  if (l.nodes > 1) argv.insert(argv.begin() + 1, {"--hostfile", "hostfile"});
  std::vector<std::string> args = script_args;
  if (replace_ds_config_path(args, ds_config_path) == 0) {
    bool has_flag = false;
    for (const auto& w : args) has_flag = has_flag || w == "--deepspeed";
    if (!has_flag) args.push_back("--deepspeed");
    args.insert(args.end(), {"--deepspeed_config", ds_config_path});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return tf32_env(c) + shell_join(argv);
}

std::string megatron_launch_script(const TrainConfig& c, const Cluster& cluster) {
  const LaunchLayout l = launch_layout(c, cluster);
  std::string sh =
      "#!/bin/sh\n# Megatron-LM's pretrain_gpt.py with the priced flags (megatron_args.txt); add your data\n"
      "# and tokenizer arguments. Several hosts: set MASTER_ADDR and --node_rank on each.\n";
  // Megatron-LM asserts one hardware queue when TP or CP overlaps communication before
  // Blackwell, and asserts against it under Megatron-FSDP (arguments.py).
  if (!c.megatron_fsdp() && (c.tp > 1 || c.cp > 1)) sh += "export CUDA_DEVICE_MAX_CONNECTIONS=1\n";
  if (c.gemm_precision() == Precision::tf32) sh += "export TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1\n";
  sh += shell_join({"torchrun", "--nnodes", std::to_string(l.nodes), "--nproc_per_node",
                    std::to_string(l.gpus_per_node), "pretrain_gpt.py"}) +
        " $(cat \"$(dirname \"$0\")/megatron_args.txt\")\n";
  return sh;
}

std::string shell_quote(const std::string& w) {
  static const std::string safe =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-";
  if (!w.empty() && w.find_first_not_of(safe) == std::string::npos) return w;
  std::string out = "'";
  for (char ch : w) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace dsplan
