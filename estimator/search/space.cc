// Default ranges and structural validity of configurations. Support rules and sources:
//  - TP must divide attention heads and KV heads (Megatron splits heads across ranks).
//  - Megatron-LM splits layers evenly, so PP must divide them, unless its release (since
//    2025-02) counts the embedding and/or the loss as a layer: then PP (x VPP) must divide
//    layers + 2 or + 1 (TrainConfig::set_pipeline_split), or else (vpp 1) its explicit
//    split puts ceil(layers / pp) on each middle stage and the rest on the ends
//    (set_balanced_split); a pinned split takes the pp it fits. DeepSpeed's PipelineModule
//    partitions any count (BLOOM-176B: 70 layers on 12 stages), so there PP only must not
//    exceed the layers, and the slowest stage holds ceil(layers / pp) of them (memory and
//    time models). Interleaving needs the layers (so counted) divisible by pp*vpp, pp >= 2
//    and the number of micro-batches a multiple of pp (Megatron's interleaved 1F1B schedule).
//  - DeepSpeed's pipeline engine supports ZeRO stage <= 1 only and runs plain 1F1B (its
//    TrainSchedule has no interleaved virtual stages); Megatron's distributed
//    optimizer is its ZeRO-1; DDP has no sharding; FSDP shards as ZeRO-2 (SHARD_GRAD_OP)
//    or ZeRO-3 (FULL_SHARD) and has no pipeline engine.
//  - Block recompute (some layers of each stage) is priced for plain 1F1B only (vpp 1) and
//    needs fewer recomputed layers than the stage holds (else it is full recompute).
//  - Optimizer offload needs ZeRO >= 1, parameter offload ZeRO-3 (DeepSpeed docs).
//  - FlashAttention needs Ampere or newer and 16-bit inputs; sequence parallelism needs
//    TP > 1 (it shards the TP-replicated activations).
#include "estimator/search/space.h"

#include <algorithm>

#include "core/names.h"

namespace dsplan {

bool SearchSpace::pinned() const {
  return zero.size() == 1 && tp.size() == 1 && pp.size() == 1 && vpp.size() == 1 && cp.size() <= 1 &&
         ep.size() <= 1 && micro_batch.size() == 1 && (global_batch || grad_accum.size() == 1) &&
         checkpointing.size() == 1 && flash.size() == 1 && sequence_parallel.size() == 1 &&
         offload.size() == 1 && recompute_modules.size() <= 1;
}

std::uint8_t cheap_recompute_modules(const ModelSpec& m) {
  std::uint8_t bits = 0;
  if (is_mla(m)) bits |= module_bit(RecomputeModule::mla_up_proj) | module_bit(RecomputeModule::layernorm);
  if (is_moe(m)) bits |= module_bit(RecomputeModule::moe_act) | module_bit(RecomputeModule::layernorm);
  return bits;
}

void set_recompute_modules(std::uint8_t modules, TrainConfig& cfg, std::vector<std::string>& why) {
  if (modules == 0) return;
  cfg.recompute_modules = modules;
  if (cfg.checkpointing != Checkpointing::selective)
    why.push_back("recompute modules go with selective checkpointing only");
  // Megatron-Core refuses these with FP8 delayed scaling (transformer_config.py).
  const std::uint8_t discard = module_bit(RecomputeModule::moe_act) | module_bit(RecomputeModule::layernorm);
  if (cfg.fp8 && cfg.fp8_recipe == Fp8Recipe::delayed && (modules & discard) != 0)
    why.push_back("Megatron-Core's moe_act and layernorm recompute need FP8 current scaling, not delayed");
}

bool sinks_trainable(const TrainConfig& run) {
  return run.framework == Framework::megatron &&
         (run.attention == AttentionKernel::auto_ || run.attention == AttentionKernel::cudnn);
}

std::string tp_problem(int tp, const ModelSpec& m, const Cluster& c, bool within_node) {
  if (tp < 1) return "must be at least 1";
  if (m.heads % tp != 0) return "does not divide the " + std::to_string(m.heads) + " attention heads";
  const int kv = kv_heads_of(m);
  if (kv % tp != 0) return "does not divide the " + std::to_string(kv) + " key/value heads";
  if (tp > c.num_gpus) return "exceeds the " + std::to_string(c.num_gpus) + " GPUs";
  if (c.num_gpus % tp != 0) return "does not divide the " + std::to_string(c.num_gpus) + " GPUs";
  if (within_node && tp > c.node.gpus_per_node)
    return "exceeds the " + std::to_string(c.node.gpus_per_node) + " GPUs of a node";
  return "";
}

std::string pp_problem(int pp, const ModelSpec& m, const Cluster& c, Framework fw, int megatron_release,
                       int first_layers, int last_layers) {
  if (pp < 1) return "must be at least 1";
  if (pp > m.layers) return "exceeds the " + std::to_string(m.layers) + " layers";
  TrainConfig split;
  split.framework = fw;
  split.megatron_release = megatron_release;
  split.pp = pp;
  split.pp_first_layers = first_layers;
  split.pp_last_layers = last_layers;
  const bool pinned = split.explicit_split();  // before set_pipeline_split, which may derive one
  if (pinned && pp == 1) return "has no pipeline for the pinned split (--pp-first-layers, --pp-last-layers)";
  if (!split.set_pipeline_split(m.layers)) {
    const std::string n = std::to_string(m.layers);
    if (pinned)
      return "does not take the pinned split: the " + std::to_string(m.layers - first_layers - last_layers) +
             " layers between the first stage's " + std::to_string(first_layers) + " and the last's " +
             std::to_string(last_layers) + " do not divide evenly over the " + std::to_string(pp - 2) +
             " stages between them, a layer or more each";
    if (split.megatron_accounted_split())
      return "does not divide the " + n + " layers, nor " + n + " + 1 or " + n +
             " + 2 with the loss and embedding counted as layers (Megatron-Core's "
             "--account-for-*-in-pipeline-split), nor leaves each end stage a layer beside middle stages of "
             "ceil(" +
             n + " / pp); DeepSpeed's pipeline engine takes any count";
    return "does not divide the " + n + " layers (" + name(fw) +
           (fw == Framework::megatron ? " of this release splits layers evenly" : " splits layers evenly") +
           "; DeepSpeed's pipeline engine does not need it)";
  }
  if (c.num_gpus % pp != 0) return "does not divide the " + std::to_string(c.num_gpus) + " GPUs";
  return "";
}

SearchSpace with_defaults(SearchSpace s, const ModelSpec& m, const Cluster& c) {
  // A flash-class kernel needs Ampere or newer, 16-bit inputs and heads it takes, and with
  // attention sinks Transformer Engine's cuDNN attention (make_config).
  const bool sinks_ok = !m.attention_sinks || sinks_trainable(s.run);
  const bool flash_possible = c.node.gpu.arch != GpuArch::volta && s.run.precision != Precision::fp32 &&
                              qk_head_dim_of(m) <= kMaxFlashHeadDim && sinks_ok;
  // Megatron and DDP shard the optimizer state at most (stage 1) and offload nothing: their
  // defaults leave out what make_config would refuse point by point (most of a Megatron
  // space's invalid points, and most of its search time). Megatron-FSDP (Megatron at stage
  // 3) is searched when --zero names it.
  const bool shards_states_only = s.run.framework == Framework::megatron || s.run.framework == Framework::ddp;
  if (s.zero.empty()) s.zero = shards_states_only ? std::vector<int>{0, 1} : std::vector<int>{0, 1, 2, 3};
  if (s.tp.empty())
    for (int t = 1; t <= 64; t *= 2)
      if (tp_problem(t, m, c, s.tp_within_node).empty()) s.tp.push_back(t);
  if (s.pp.empty())
    for (int p = 1; p <= std::min(64, m.layers); ++p)
      if (pp_problem(p, m, c, s.run.framework, s.run.megatron_release, s.run.pp_first_layers,
                     s.run.pp_last_layers)
              .empty())
        s.pp.push_back(p);
  if (s.vpp.empty()) {
    // Interleaving is Megatron's, and needs a micro-batch count that is a multiple of pp
    // (so more than one a step): elsewhere every vpp > 1 is invalid, and is not searched.
    // Megatron recipes run up to one layer a chunk (NeMo: GPT-3 175B and Nemotron-4 340B
    // at VP 12, Llama 2 70B at VP 20 on 80 layers): every V up to 16 that divides a common
    // per-stage layer count (24, 32, 40, 48, 80, 96, 128 units) is searched.
    const bool accumulates =
        s.global_batch.has_value() ||
        std::any_of(s.grad_accum.begin(), s.grad_accum.end(), [](int g) { return g > 1; });
    s.vpp = {1};
    if (s.run.framework == Framework::megatron && accumulates)
      for (int v : {2, 3, 4, 5, 6, 8, 10, 12, 16}) {
        // Only a V that some searched pp splits the layers into (make_config's rule): the
        // others would only add invalid points, a million of them for a 405B plan.
        const bool splits = std::any_of(s.pp.begin(), s.pp.end(), [&](int p) {
          TrainConfig t = s.run;
          t.pp = p;
          t.vpp = v;
          return p >= 2 && t.set_pipeline_split(m.layers);
        });
        if (splits) s.vpp.push_back(v);
      }
  }
  if (s.cp.empty()) {
    // Context parallelism (Megatron-Core's, with a fused attention kernel) where sequences
    // are long enough for it to pay: NVIDIA's Llama 3 recipes run CP 2 from 8,192 tokens,
    // the Llama 3 paper CP 16 at 131,072. Each rank keeps at least 2,048 tokens, and the
    // sequence must cut into 2 x cp chunks (make_config).
    s.cp = {1};
    if (s.run.framework == Framework::megatron && flash_possible && s.run.seq_len >= 8192)
      for (int cp = 2; cp <= 64 && s.run.seq_len / cp >= 2048; cp *= 2)
        if (c.num_gpus % cp == 0 && s.run.seq_len % (2 * cp) == 0) s.cp.push_back(cp);
  }
  if (s.ep.empty()) {
    s.ep = {1};
    if (is_moe(m))
      for (int ep = 2; ep <= m.experts && ep <= c.num_gpus; ep *= 2)
        if (m.experts % ep == 0 && c.num_gpus % ep == 0) s.ep.push_back(ep);
  }
  if (s.micro_batch.empty()) {
    int top = s.run.seq_len <= 512 ? 512 : 64;
    for (int b = 1; b <= top; b *= 2) s.micro_batch.push_back(b);
  }
  if (s.grad_accum.empty()) s.grad_accum = {1};
  if (s.checkpointing.empty())
    s.checkpointing = {Checkpointing::none, Checkpointing::selective, Checkpointing::full,
                       Checkpointing::block};
  if (s.recompute_modules.empty()) {
    s.recompute_modules = {0};
    const std::uint8_t cheap = cheap_recompute_modules(m);
    const bool selective = std::find(s.checkpointing.begin(), s.checkpointing.end(),
                                     Checkpointing::selective) != s.checkpointing.end();
    if (s.run.framework == Framework::megatron && cheap != 0 && selective)
      s.recompute_modules.push_back(cheap);
  }
  if (s.flash.empty()) {
    s.flash = {false};
    if (flash_possible) s.flash.push_back(true);
  }
  if (s.sequence_parallel.empty()) s.sequence_parallel = {false, true};
  if (s.offload.empty())
    s.offload = shards_states_only ? std::vector<Offload>{Offload::none}
                                   : std::vector<Offload>{Offload::none, Offload::optimizer, Offload::all};
  return s;
}

void set_expert_parallel(const ModelSpec& m, int ep, TrainConfig& cfg, std::vector<std::string>& why) {
  cfg.ep = std::max(1, ep);
  if (!is_moe(m)) {
    if (cfg.ep > 1) why.push_back("expert parallelism (ep > 1) needs a mixture-of-experts model");
    return;
  }
  if (cfg.framework != Framework::megatron)
    why.push_back("mixture-of-experts models are planned for Megatron-Core only (--framework megatron)");
  if (m.experts % cfg.ep != 0)
    why.push_back("ep " + std::to_string(cfg.ep) + " does not divide the " + std::to_string(m.experts) +
                  " experts");
  const int ranks = cfg.tp * cfg.cp * cfg.dp, etp = std::max(1, cfg.etp);
  if (etp > 1 && ranks % (cfg.ep * etp) != 0)
    why.push_back("ep x etp = " + std::to_string(cfg.ep * etp) +
                  " does not divide tp x cp x dp = " + std::to_string(ranks));
  if (m.moe_ffn % etp != 0)
    why.push_back("etp " + std::to_string(etp) + " does not divide the expert width " +
                  std::to_string(m.moe_ffn));
  if (ranks % cfg.ep != 0)
    why.push_back("ep " + std::to_string(cfg.ep) + " does not divide tp x cp x dp = " +
                  std::to_string(ranks) + " (Megatron-Core takes the expert-parallel ranks from them)");
  if (cfg.tp > 1 && !cfg.sequence_parallel)
    why.push_back("Megatron-Core runs MoE layers with tp > 1 only under sequence parallelism");
}

std::vector<std::string> make_config(const SearchSpace& s, const ModelSpec& m, const Cluster& c, int zero,
                                     int tp, int pp, int vpp, int cp, int mbs, int gas, Checkpointing ck,
                                     bool flash, bool sp, Offload off, TrainConfig& cfg) {
  std::vector<std::string> why;
  cfg = s.run;
  cfg.zero_stage = zero;
  cfg.tp = tp;
  cfg.pp = pp;
  cfg.vpp = vpp;
  cfg.micro_batch = mbs;
  cfg.checkpointing = ck;
  const bool split = cfg.set_pipeline_split(m.layers);
  const int stage_layers = cfg.stage_layers(m.layers).most();
  cfg.recompute_layers = ck != Checkpointing::block ? 0
                         : s.recompute_layers > 0   ? std::min(s.recompute_layers, stage_layers)
                                                    : (stage_layers + 1) / 2;
  cfg.flash_attention = flash;
  cfg.sequence_parallel = sp;
  cfg.offload = off;
  cfg.cp = std::max(1, cp);
  cfg.dp = std::max(1, c.num_gpus / std::max(1, tp * pp * cfg.cp));
  if (tp * pp * cp * cfg.dp != c.num_gpus)
    why.push_back((cp > 1 ? "tp*pp*cp = " : "tp*pp = ") + std::to_string(tp * pp * cp) + " does not divide " +
                  std::to_string(c.num_gpus) + " GPUs");
  if (cp > 1) {
    // Megatron-Core's context parallelism runs Transformer Engine's attention, which cuts
    // each sequence into 2 cp chunks (context_parallel.h).
    if (s.run.framework != Framework::megatron)
      why.push_back("context parallelism is modelled for Megatron-Core only (--framework megatron)");
    if (!flash) why.push_back("context parallelism needs a fused (flash-class) attention kernel");
    if (s.run.seq_len % (2 * cp) != 0)
      why.push_back("context parallelism cuts the sequence into 2 x cp = " + std::to_string(2 * cp) +
                    " chunks: the sequence length must be a multiple of it");
  }
  if (s.global_batch) {
    std::int64_t per_step = static_cast<std::int64_t>(mbs) * cfg.dp;
    if (*s.global_batch % per_step != 0) {
      why.push_back("global batch " + std::to_string(*s.global_batch) +
                    " is not a multiple of micro-batch x dp = " + std::to_string(per_step));
      cfg.grad_accum = 1;
    } else if (*s.global_batch / per_step > kMaxGradAccum) {
      why.push_back("global batch " + std::to_string(*s.global_batch) + " needs more than " +
                    std::to_string(kMaxGradAccum) +
                    " micro-batches per step at micro-batch x dp = " + std::to_string(per_step));
      cfg.grad_accum = 1;
    } else {
      cfg.grad_accum = static_cast<int>(*s.global_batch / per_step);
    }
  } else {
    cfg.grad_accum = gas;
  }
  if (ck == Checkpointing::block && vpp > 1)
    why.push_back("block recompute with interleaved stages (vpp > 1) is not modelled");
  // Megatron-DeepSpeed's pipeline model recomputes uniformly only: with block it recomputes
  // nothing (model/gpt_model.py), so such a plan would not run as priced.
  if (ck == Checkpointing::block && pp > 1 && cfg.framework == Framework::deepspeed)
    why.push_back("block recompute in a DeepSpeed pipeline (Megatron-DeepSpeed's recomputes uniformly only)");
  if (ck == Checkpointing::block && cfg.recompute_layers >= stage_layers)
    why.push_back("block recompute of every layer of the stage is full recompute");
  if (vpp <= 1 && !split)
    why.push_back("pp does not split the layers (" +
                  pp_problem(pp, m, c, cfg.framework, cfg.megatron_release, s.run.pp_first_layers,
                             s.run.pp_last_layers) +
                  ")");
  if (vpp > 1) {
    if (pp < 2) why.push_back("interleaved stages (vpp > 1) need pp >= 2");
    else if (!split)
      why.push_back(
          cfg.megatron_accounted_split()
              ? "layers not divisible by pp*vpp, nor +1 or +2 (loss and embedding counted as layers)"
              : "layers not divisible by pp*vpp");
    else if (cfg.grad_accum % pp != 0)
      why.push_back("interleaved 1F1B needs the micro-batch count to be a multiple of pp");
  }
  switch (s.run.framework) {
    case Framework::deepspeed:
      if (pp > 1 && zero >= 2) why.push_back("DeepSpeed's pipeline engine supports ZeRO stage 0-1 only");
      if (vpp > 1) why.push_back("DeepSpeed's pipeline engine has no interleaved schedule (vpp 1 only)");
      break;
    case Framework::megatron:
      // Stage 1: the distributed optimizer; stage 3: Megatron-FSDP (optim_grads_params).
      if (zero == 2)
        why.push_back(
            "Megatron shards optimizer state (distributed optimizer = stage 1) or everything "
            "(Megatron-FSDP optim_grads_params = stage 3); its optim_grads strategy is not modelled");
      break;
    case Framework::fsdp:
      if (pp > 1) why.push_back("FSDP has no pipeline engine");
      if (zero == 1) why.push_back("FSDP shards gradients too: stage 2 (SHARD_GRAD_OP) or 3 (FULL_SHARD)");
      break;
    case Framework::ddp:
      if (zero > 1)
        why.push_back(
            "DDP shards only the optimizer state, with torch's ZeroRedundancyOptimizer (ZeRO stage 0 or 1)");
      if (tp > 1 || pp > 1) why.push_back("DDP has no tensor or pipeline parallelism");
      break;
  }
  if (off == Offload::optimizer && zero < 1) why.push_back("optimizer offload needs ZeRO stage >= 1");
  if (off == Offload::all && zero != 3) why.push_back("parameter offload needs ZeRO stage 3");
  if (off != Offload::none && s.run.framework != Framework::deepspeed && s.run.framework != Framework::fsdp)
    why.push_back(std::string("offload is not supported by ") + name(s.run.framework));
  // ZeRO-Offload steps on the CPU with DeepSpeedCPUAdam (DeepSpeed forces its CPU optimizer
  // when offloading); FSDP's CPU offload runs torch's optimizer there. bitsandbytes' 8-bit
  // Adam is a CUDA kernel, so neither can move it.
  if (off != Offload::none && s.run.framework == Framework::deepspeed && s.run.optimizer != Optimizer::adam &&
      s.run.optimizer != Optimizer::adam_8bit)
    why.push_back("DeepSpeed's optimizer offload runs DeepSpeedCPUAdam: --optimizer adam only");
  if (off != Offload::none && s.run.optimizer == Optimizer::adam_8bit)
    why.push_back("8-bit Adam (bitsandbytes) runs on the GPU and cannot be offloaded");
  if (flash && c.node.gpu.arch == GpuArch::volta) why.push_back("FlashAttention needs Ampere or newer");
  if (flash && s.run.precision == Precision::fp32) why.push_back("FlashAttention needs fp16 or bf16");
  // FlashAttention-2 and -3, PyTorch SDPA's flash backend and cuDNN's fused attention take
  // head dimensions up to 256 (flash-attn README; SDPA's sdp_utils checks).
  if (flash && qk_head_dim_of(m) > kMaxFlashHeadDim)
    why.push_back("FlashAttention kernels take head dimensions up to " + std::to_string(kMaxFlashHeadDim) +
                  " (this model's is " + std::to_string(qk_head_dim_of(m)) + ")");
  // Learned attention sinks (gpt-oss): FlashAttention-2 and -3 compute them forward only,
  // with no backward (flash-attn issues 1797 and 2102); Transformer Engine's cuDNN
  // attention trains them (softmax_type "learnable"), which Megatron-Core runs.
  if (flash && m.attention_sinks && !sinks_trainable(s.run))
    why.push_back(
        "attention sinks train only in Transformer Engine's cuDNN attention (--framework megatron, "
        "--attention auto or cudnn); FlashAttention has no backward for them: --flash off");
  if (sp && tp < 2) why.push_back("sequence parallelism needs tp > 1");
  if (s.run.cpu_offload_layers > 0) {  // Megatron-Core's rules for --cpu-offloading
    if (s.run.framework != Framework::megatron) why.push_back("CPU activation offloading is Megatron's");
    if (pp > 1) why.push_back("Megatron's CPU activation offloading has no pipeline parallelism (pp 1)");
    if (ck != Checkpointing::none) why.push_back("Megatron's CPU activation offloading excludes recompute");
    if (s.run.cpu_offload_layers >= m.layers)
      why.push_back("CPU activation offloading takes fewer layers than the model's " +
                    std::to_string(m.layers));
  }
  if (s.run.precision == Precision::bf16 && c.node.gpu.bf16_tc_flop_per_clk_sm <= 0)
    why.push_back(c.node.gpu.name + " has no bf16 tensor cores");
  if (s.run.nvfp4()) {
    if (c.node.gpu.fp4_tc_flop_per_clk_sm <= 0)
      why.push_back(c.node.gpu.name +
                    " has no FP4 tensor cores (NVFP4 needs Blackwell): --precision fp8 or bf16");
  } else if (s.run.fp8) {
    if (c.node.gpu.fp8_tc_flop_per_clk_sm <= 0) why.push_back(c.node.gpu.name + " has no FP8 tensor cores");
    else if (s.run.fp8_recipe == Fp8Recipe::mxfp8 && c.node.gpu.arch != GpuArch::blackwell)
      why.push_back("MXFP8 block scaling needs Blackwell tensor cores (" + c.node.gpu.name + " is " +
                    name(c.node.gpu.arch) + "): --fp8-recipe delayed or tensorwise");
  }
  if (s.run.fp8 && s.run.framework != Framework::megatron)
    why.push_back("FP8 and NVFP4 linears are modelled for Megatron with Transformer Engine only");
  if (s.run.fp8 && s.run.precision == Precision::fp32)
    why.push_back("FP8 and NVFP4 linears run inside bf16 or fp16 mixed precision");
  return why;
}

}  // namespace dsplan
