// MemoryModel::estimate: per-GPU memory of the most loaded pipeline stage.
// Stage 0 holds the embedding and min(p, gas) micro-batches of activations in flight under
// 1F1B (x(1 + (p-1)/(p v)) interleaved); the last stage holds the LM head (or the tied
// embedding's copy) and the logits of one micro-batch. Both are evaluated and the larger
// device total wins. The peak is
//   allocated = model states + max(activations + in-backward buffers, post-backward buffers)
// reserved = allocated x (1 + f), device = reserved + CUDA context + NCCL buffers, with f
// and the context from MemoryOptions (the software stack).
// Derivations and sources: docs/model.md §3 Memory.
#include <algorithm>
#include <cmath>
#include <optional>

#include "estimator/memory.h"
#include "estimator/memory/activations.h"
#include "estimator/memory/model_states.h"
#include "estimator/memory/overhead.h"
#include "estimator/params.h"

namespace dsplan {

namespace {

// Parameter elements of one rank, split by how TP shards them.
struct RankParams {
  double layer = 0;         // one layer on this TP rank (MoE: with its experts)
  double layer_expert = 0;  // MoE: the rank's routed experts of one layer (experts / ep)
  double embed = 0;       // vocab-parallel word embedding (or LM head) on this rank
  double other_embed = 0; // positions, token types, embedding norm (replicated)
  double tail = 0;        // final norm + pooler (replicated)
  double largest = 0;     // largest single module on this rank
  double persistent_layer = 0;  // ZeRO-3 unpartitioned elements per layer
  double persistent_fixed = 0;
  double adafactor_bpp = 4;
  bool untied_head = false;
};

RankParams rank_params(const ModelSpec& m, const ParamCounts& c, const TrainConfig& cfg, double threshold,
                       double share) {
  const double t = cfg.tp, h = m.hidden, f = m.ffn_hidden;
  const double d = head_dim_of(m);
  const double qkv = d * (m.heads + 2.0 * kv_heads_of(m));
  const double bias_rep = m.linear_bias ? 2 * h : 0;  // row-parallel output biases
  const double layer_rep = static_cast<double>(c.layer_norms) + bias_rep;
  RankParams r;
  // MoE: the router is replicated over TP and each rank holds experts / ep whole experts.
  // With dense layers, the busiest rank's layer is the blend of the two kinds
  // (moe_layer_share): its MLP partly dense, its experts and router in that share.
  const double expert_split = std::max(1, cfg.ep) * std::max(1, cfg.etp);
  const double moe_rank =
      share * (static_cast<double>(c.router) + static_cast<double>(c.experts) / expert_split);
  r.layer_expert = share * static_cast<double>(c.experts) / expert_split;
  const double mlp = share * static_cast<double>(c.mlp) + (1.0 - share) * static_cast<double>(c.dense_mlp);
  const double mla_rep = tp_replicated_attention(m);  // MLA's down projections, whole on each rank
  r.layer = (static_cast<double>(c.attention + c.layer_norms) + mlp - layer_rep - mla_rep) / t + layer_rep +
            mla_rep + moe_rank;
  const double vp = static_cast<double>(padded_vocab(m, cfg.tp));
  r.embed = vp * h / t;
  r.other_embed = static_cast<double>(c.other_embedding);
  r.tail = static_cast<double>(c.final_norm + c.pooler);
  r.untied_head = c.lm_head > 0;
  r.largest = std::max(r.embed, static_cast<double>(c.largest_module) / t);
  if (h < threshold) r.persistent_layer = layer_rep;
  if (has_qkv_bias(m) && qkv / t < threshold) r.persistent_layer += qkv / t;
  const double fb = (m.gated_mlp ? 2 * f : f) / t;
  if (m.linear_bias && fb < threshold) r.persistent_layer += fb;
  if (h < threshold) r.persistent_fixed = static_cast<double>(c.final_norm);
  // Adafactor: 4 B per row + column of each matrix, 4 B per element of vectors.
  const double mats = (h + qkv) + (d * m.heads + h) + (m.gated_mlp ? 3 : 2) * (h + f);
  const double vecs =
      static_cast<double>(c.layer_norms) + (has_qkv_bias(m) ? qkv : 0) + (m.linear_bias ? 2 * h + fb * t : 0);
  const double total = static_cast<double>(c.total());
  const double fact = m.layers * (mats + vecs) + (vp + h) * (r.untied_head ? 2 : 1) +
                      r.other_embed + r.tail;
  r.adafactor_bpp = total > 0 ? 4 * fact / total : 4;
  return r;
}

// Multi-token prediction's parameters on the last stage: each module's layer, its 2h x h
// projection (TP-split) and two norms, and with pp > 1 an untied model's word embedding,
// which the modules look the next tokens up in.
double mtp_params(const ModelSpec& m, const TrainConfig& cfg, const RankParams& rp) {
  if (cfg.mtp_layers <= 0) return 0.0;
  return cfg.mtp_layers * (rp.layer + mtp_projection_params(m, cfg.tp)) +
         (cfg.pp > 1 && !m.tied_embeddings ? rp.embed : 0.0);
}

LayerShape layer_shape(const ModelSpec& m, const TrainConfig& cfg, double share) {
  LayerShape x;
  const double d = head_dim_of(m);
  x.b = cfg.micro_batch;
  x.s = cfg.seq_len;
  x.h = m.hidden;
  x.heads = m.heads;
  x.q = d * m.heads;
  x.kv = d * kv_heads_of(m);
  if (is_mla(m)) {  // per-head keys of the query's width, values and output v_head_dim wide
    x.q = double(qk_head_dim_of(m)) * m.heads;
    x.kv = 0.5 * (qk_head_dim_of(m) + v_head_dim_of(m)) * m.heads;
    x.out = double(v_head_dim_of(m)) * m.heads;
    x.latent = 2.0 * (m.q_lora_rank + m.kv_lora_rank) + m.qk_rope_head_dim;
  }
  // MoE: topk experts' width and the shared experts'; with dense layers the busiest
  // rank's blend of that and the dense layers' width (moe_layer_share).
  x.f = share * active_ffn(m) + (1.0 - share) * m.ffn_hidden;
  x.f_routed = is_moe(m) ? share * m.topk * double(m.moe_ffn) : 0;
  x.f_shared = is_moe(m) ? share * double(m.shared_ffn) : 0;
  x.dense_share = is_moe(m) ? 1.0 - share : 1.0;
  x.moe_copies = is_moe(m) ? share * m.topk : 0;
  x.moe_saves_outputs =
      cfg.framework != Framework::megatron || (cfg.megatron_release != 0 && cfg.megatron_release < 202504);
  x.moe_gathered = std::max(1, cfg.etp);
  x.experts = is_moe(m) ? share * m.experts : 0;
  x.mlp_tensors = !m.gated_mlp ? 2 : cfg.framework == Framework::megatron ? 3 : 4;
  x.t = cfg.tp;
  x.sp = cfg.sequence_parallel && cfg.tp > 1;
  const bool mixed = cfg.precision != Precision::fp32;
  x.e = mixed ? 2 : 4;
  x.dropout = has_dropout(m);  // ModelSpec::dropout
  x.norms = m.norms_per_layer;
  x.qk_norm = m.qk_norm;
  // torch.nn.RMSNorm's fallback (NormKernel::torch under autocast), whose saved tensors the
  // census of the reference workload lists. Hugging Face's eager chains keep their own
  // (docs/model.md §4, "Norms of 16-bit inputs under autocast"): not priced here.
  x.norm16_eager =
      m.norm == NormKind::rmsnorm && cfg.norm_kernel == NormKernel::torch && !cfg.rmsnorm16_fused();
  x.attn_softcap = m.attn_softcap;
  x.flash = cfg.flash_attention;
  x.selective = cfg.recomputes(RecomputeModule::core_attn);
  // Megatron's TE spec keeps MLA's input norm and an MoE layer's pre-MLP norm as modules.
  x.separate_norms = (is_mla(m) ? 1.0 : 0.0) + (is_moe(m) ? share : 0.0);
  x.rc_mla_up_proj = is_mla(m) && cfg.recomputes(RecomputeModule::mla_up_proj);
  x.rc_moe_act = cfg.recomputes(RecomputeModule::moe_act);
  x.rc_layernorm = cfg.recomputes(RecomputeModule::layernorm);
  x.rc_mlp = cfg.recomputes(RecomputeModule::mlp);
  x.rc_moe = cfg.recomputes(RecomputeModule::moe);
  x.rc_shared = cfg.recomputes(RecomputeModule::shared_experts);
  x.fp8 = cfg.fp8;
  x.nvfp4 = cfg.nvfp4();
  x.amp_softmax = cfg.torch_autocast();
  const bool eager = cfg.framework != Framework::megatron;  // PyTorch model code, not TE
  x.eager_rotary = eager && m.position == PositionKind::rotary;
  x.repeat_kv = eager;
  if (x.amp_softmax) {
    const LayerLinears l = layer_linears(m, cfg.megatron_layers());
    x.input_copies = (l.qkv - 1) + (l.up_gate - 1);
  }
  x.fp32_loss = cfg.framework != Framework::fsdp;
  x.fused_loss = cfg.cross_entropy == CrossEntropy::fused;
  x.fp32_residual = x.amp_softmax;  // torch.amp keeps the residual stream in fp32
  // gelu_new keeps the tanh output, 1 + tanh and 0.5x (model_spec.h). Under torch.amp its
  // pow runs in fp32 and keeps its fp32 upcast of x in place of x, and tanh and 1 + tanh
  // are fp32: 4 + 4 + 4 + 2 (0.5x) + 2 (FC2 input) = 16 bytes, 8 units of e = 2 where the
  // plain MLP keeps 2 (docs/model.md §3, "gelu_new under autocast").
  if (m.activation_unfused) x.mlp_tensors += x.amp_softmax ? 6 : 3;
  // gpt-oss's clamped SwiGLU in eager model code also keeps the clamped gate, the sigmoid
  // and up + 1 (elementwise.cc); Megatron-Core's fused kernel keeps its input alone.
  if (m.activation_clamp && m.gated_mlp && eager) x.mlp_tensors += 3;
  return x;
}

struct StageLoad {
  double params = 0;  // parameter elements on this rank
  int layers = 0;
  double in_flight = 1;
  bool first = false;
  bool last = false;
};

// One layer's activation figures, the same for every stage of a configuration: computed
// once per estimate and shared by the first and the last stage.
struct LayerBytes {
  double stored = 0;      // a layer's saved activations (selective recompute applied)
  double checkpoint = 0;  // a recomputed layer's saved input
  double transient = 0;   // one layer's backward temporaries
  double rerun = 0;       // a recomputed layer's forward (or modules), alive during its backward
};

LayerBytes layer_bytes(const TrainConfig& cfg, const LayerShape& x) {
  LayerBytes b;
  const LayerActivation a = layer_activation(x);
  b.stored = a.total();
  b.transient = layer_backward_transient(x);
  b.rerun = a.recomputed;  // selective recompute modules: rebuilt for the layer's backward
  if (recomputes_layers(cfg.checkpointing)) {
    // Recomputed layers keep only their input; block recompute keeps the others whole.
    LayerShape live = x;
    live.selective = false;
    // DeepSpeed's partition_activations keeps 1/tp of it on each rank (the gathered whole is
    // the re-run forward's input, counted in `rerun`).
    b.checkpoint = layer_checkpoint_bytes(x) / (cfg.ds_partitions_checkpoints() ? x.t : 1.0);
    b.rerun = layer_activation(live).total();
  }
  return b;
}

// Peak activation bytes of one stage. Three phases never overlap: the loss (logits of
// the last micro-batch on the last stage, at the end of its forward), and the backward of
// one layer (its gradient temporaries, plus under full recomputation its re-run forward).
double stage_activations(const ModelSpec& m, const TrainConfig& cfg, const LayerShape& x,
                         const LayerBytes& lb, const StageLoad& st) {
  double stored = 0;
  double layer_phase = lb.transient;
  if (cfg.checkpointing == Checkpointing::selective) layer_phase += lb.rerun;
  if (recomputes_layers(cfg.checkpointing)) {
    const int n = cfg.recomputed_layers(st.layers);
    // DeepSpeed's cpu_checkpointing keeps the recomputed layers' inputs in host memory.
    const double kept = cfg.ds_checkpoints_on_host() ? 0.0 : lb.checkpoint * n;
    stored = (kept + lb.stored * (st.layers - n)) * st.in_flight;
    if (n > 0) layer_phase += lb.rerun;
  } else {
    // CPU activation offloading (pp 1): the offloaded layers' activations leave the GPU,
    // but for one layer's in transit (Transformer Engine's double buffer).
    const int kept = cfg.cpu_offload_layers > 0 ? st.layers - cfg.cpu_offload_layers + 1 : st.layers;
    stored = lb.stored * std::max(1, kept) * st.in_flight;
  }
  const double sb = x.s * x.b;
  if (st.first) {
    // int64 token ids + the embedding dropout mask, per micro-batch in flight.
    stored += (8 * sb + (x.dropout ? sb * x.h / (x.sp ? x.t : 1) : 0)) * st.in_flight;
  }
  double loss_phase = 0;
  if (st.last) {
    stored += (x.residual_bytes() + x.e) * sb * x.h;  // final-norm input and LM-head input
    if (m.vocab_logits) {
      const double vp = static_cast<double>(padded_vocab(m, cfg.tp));
      // Soft-capped logits (Gemma 2) keep the tanh output for the backward: e per logit more.
      loss_phase =
          sb * vp / x.t *
          (loss_bytes_per_logit(x, cfg.framework == Framework::megatron) + (m.logit_softcap ? x.e : 0.0));
    }
  }
  return stored + std::max(loss_phase, layer_phase);
}

struct Buffers {
  double during = 0;  // alive with the activations (backward)
  double after = 0;   // alive after backward (gradient all-reduce, optimizer step)
};

Buffers framework_buffers(const TrainConfig& cfg, double params, double w) {
  Buffers b;
  const ZeroKnobs& z = cfg.zero;
  switch (cfg.framework) {
    case Framework::deepspeed:
      if (cfg.zero_stage == 0) {
        const double gw = cfg.deepspeed_bf16_optimizer() ? 4.0 : w;  // BF16_Optimizer: fp32 grads
        const double flat = cfg.dp > 1 ? gw * std::min(params, z.reduce_bucket_elems) : 0;
        // FP16_Optimizer (fp16, and bf16 from 0.17.6 outside a pipeline) flattens the
        // gradients into an fp32 .grad for its step (fused_optimizer.py, `p.grad.to(fp32)`).
        const double fp32_grads = cfg.deepspeed_fp16_optimizer() ? 4 * params : 0;
        b.after = std::max(flat, fp32_grads);
      } else if (cfg.zero_stage <= 2) {
        if (z.overlap(cfg.zero_stage) && z.contiguous_gradients) {
          b.during = 2 * w * z.reduce_bucket_elems;  // backward() allocates two ipg buffers
        } else if (z.contiguous_gradients) {
          b.during = w * z.reduce_bucket_elems;
        } else {
          b.after = w * std::min(params, z.reduce_bucket_elems);
        }
      } else {
        b.during = w * z.reduce_bucket_elems +
                   w * std::min(z.prefetch_bucket_elems, z.max_live_params);
      }
      break;
    case Framework::ddp:
      if (cfg.dp > 1 && cfg.zero_stage < 2)
        b.during = (cfg.ddp_half_model() ? w : 4) * params;  // bucket copy of grads
      break;
    case Framework::megatron:
      // fp16 keeps 16-bit gradients beside the fp32 main gradients until the step (the
      // .grad tensors of 2021's Float16Optimizer; today the fp16 grad buffer whose fp32
      // copy step() makes): 2 B/param more after backward, 20 B/param at the step.
      if (cfg.precision == Precision::fp16 && cfg.zero_stage == 0) b.after = 2 * params;
      break;
    case Framework::fsdp:
      break;
  }
  return b;
}

MemoryBreakdown stage_memory(const ModelSpec& m, const Cluster& cl, const MemoryOptions& opt,
                             const TrainConfig& cfg, const RankParams& rp, const LayerShape& x,
                             const LayerBytes& lb, const StageLoad& st) {
  ModelStateInputs in;
  in.framework = cfg.framework;
  in.precision = cfg.precision;
  in.optimizer = cfg.optimizer;
  in.zero_stage = cfg.zero_stage;
  in.offload = cfg.offload;
  in.megatron_fp32_grads = cfg.megatron_fp32_grads;
  in.bf16_optimizer = cfg.deepspeed_bf16_optimizer();
  in.amp_o2 = cfg.ddp_amp_o2;
  in.pure16 = cfg.pure16_model();
  in.params = st.params;
  in.largest_module = rp.largest;
  in.persistent = cfg.zero_stage == 3 ? rp.persistent_layer * st.layers + rp.persistent_fixed : 0;
  in.fsdp_unit = std::max(rp.layer, rp.embed + rp.other_embed + rp.tail);
  in.fsdp_version = cfg.fsdp_version;
  in.adafactor_bytes_per_param = rp.adafactor_bpp;
  in.dp = cfg.shard_degree(cl.gpus_per_node());  // the ranks states are sharded over
  in.grad_accum = cfg.grad_accum;
  in.grads_set_to_none = cfg.ddp_pytorch2_defaults();
  if (recomputes_layers(cfg.checkpointing)) {  // casts of all but the recomputed layers, + one
    const int n = cfg.recomputed_layers(st.layers);
    if (n > 0) in.autocast_cast_params = st.params - (n - 1) * rp.layer;
  }
  in.gpus_per_node = cl.gpus_per_node();
  in.nodes = cl.nodes();
  ModelStateMemory ms = model_state_memory(in);
  if (rp.layer_expert > 0) {
    // MoE: the experts' states shard over the tp x dp / ep ranks that hold the same experts.
    ModelStateInputs dense = in, experts = in;
    experts.params = rp.layer_expert * st.layers;
    dense.params = in.params - experts.params;
    experts.dp = cfg.expert_dp();
    const ModelStateMemory a = model_state_memory(dense), b = model_state_memory(experts);
    ms.params = a.params + b.params;
    ms.grads = a.grads + b.grads;
    ms.optimizer = a.optimizer + b.optimizer;
    ms.step_only = a.step_only + b.step_only;
    ms.host_per_node = a.host_per_node + b.host_per_node;
    ms.gathered = std::max(a.gathered, b.gathered);
  }

  const double act = stage_activations(m, cfg, x, lb, st);
  Buffers buf = framework_buffers(cfg, st.params, x.e);
  // DDP's reducer buckets (its `during`) are allocated once and live through the step too.
  buf.after = std::max(buf.after, ms.step_only + (cfg.framework == Framework::ddp ? buf.during : 0.0));
  const double live_buffers = std::max(buf.during, buf.after - act);

  // FP8 linears keep each layer weight's FP8 copy and its transpose (1 + 1 B/param), cast
  // on the first micro-batch of a step and reused by the rest (Transformer Engine's weight
  // workspaces; Megatron passes is_first_microbatch). With FP8 parameter gather the FP8
  // weight and its transpose take the 16-bit weight's 2 B instead: nothing extra. NVFP4:
  // the two copies take 9/16 B each, so with NVFP4 parameter gather (the parameters are
  // NVFP4 tensors, --fp4-param-gather) a layer weight holds 9/8 B where it held 2.
  // On Blackwell per-tensor FP8 keeps one copy, no transpose (fp8_single_copy): 1 B/param
  // cached, and gathered FP8 parameters hold 1 B where the 16-bit weight held 2.
  const double copy = linear_operand_bytes(cfg.fp8_recipe);
  const double copies = fp8_single_copy(cl.node.gpu.arch == GpuArch::blackwell, cfg.fp8_recipe) ? 1.0 : 2.0;
  const double fp8_weights = cfg.fp8 && !cfg.fp8_param_gather() ? copies * copy * rp.layer * st.layers : 0.0;
  // (Megatron-FSDP: of the 1/dp shard each rank keeps.)
  const double gathered_saving =
      cfg.fp8 && cfg.fp8_param_gather()
          ? (2.0 - copies * copy) * rp.layer * st.layers / (cfg.megatron_fsdp() ? in.dp : 1)
          : 0.0;
  MemoryBreakdown r;
  r.params = Bytes(ms.params - gathered_saving);
  r.grads = Bytes(ms.grads);
  r.optimizer = Bytes(ms.optimizer);
  r.activations = Bytes(act);
  r.buffers = Bytes(ms.gathered + std::max(0.0, live_buffers) + fp8_weights);
  r.allocated = r.params + r.grads + r.optimizer + r.activations + r.buffers;
  r.reserved = r.allocated * (1 + opt.fragmentation);
  r.device = r.reserved + opt.cuda_context + Bytes(nccl_buffer_bytes(cl.node.gpu.arch, cfg));
  r.overhead = r.device - r.allocated;
  // Offloaded activations sit in host memory, one micro-batch of them per GPU (Megatron's).
  double offloaded = cfg.cpu_offload_layers > 0 ? cfg.cpu_offload_layers * lb.stored : 0.0;
  // DeepSpeed's cpu_checkpointing: the stage's recomputed inputs, per micro-batch in flight.
  if (cfg.ds_checkpoints_on_host())
    offloaded += lb.checkpoint * cfg.recomputed_layers(st.layers) * st.in_flight;
  r.host = Bytes(ms.host_per_node + offloaded * cl.gpus_per_node());
  return r;
}

}  // namespace

MemoryModel::MemoryModel(const ModelSpec& model, const Cluster& cluster, MemoryOptions options)
    : model_(model), cluster_(cluster), options_(options), counts_(count_params(model)) {}

namespace {

// A rank's configuration (context parallelism: the rank's view) and one layer's shape on it.
struct RankLayer {
  TrainConfig cfg;
  LayerShape x;
};
RankLayer rank_layer(const ModelSpec& m, const TrainConfig& run) {
  RankLayer r{run.cp > 1 ? run.cp_rank_view() : run, {}};
  r.x = layer_shape(m, r.cfg, moe_layer_share(m, r.cfg));
  return r;
}

}  // namespace

double layer_saved_activation_bytes(const ModelSpec& m, const TrainConfig& run) {
  const RankLayer r = rank_layer(m, run);
  return layer_bytes(r.cfg, r.x).stored;
}

double layer_checkpoint_input_bytes(const ModelSpec& m, const TrainConfig& run) {
  return layer_checkpoint_bytes(rank_layer(m, run).x);
}

MemoryBreakdown MemoryModel::estimate(const TrainConfig& run) const {
  // Context parallelism: the rank holds s / cp tokens and ZeRO shards over dp x cp
  // (TrainConfig::cp_rank_view).
  std::optional<TrainConfig> view;
  const TrainConfig& cfg = run.cp > 1 ? view.emplace(run.cp_rank_view()) : run;
  // MoE with dense layers: the busiest rank's MoE share of its layers (1 otherwise).
  const double share = moe_layer_share(model_, cfg);
  const RankParams rp = rank_params(model_, counts_, cfg, cfg.zero.param_persistence_threshold, share);
  const int p = std::max(1, cfg.pp);
  const TrainConfig::StageLayers sl = cfg.stage_layers(model_.layers);
  const double head = rp.embed;  // untied LM head, or the tied embedding's copy (p > 1)

  StageLoad first;
  first.layers = sl.first;
  const int layers = first.layers;
  first.first = true;
  first.last = p == 1;
  first.params = layers * rp.layer + rp.embed + rp.other_embed;
  if (p == 1) {
    first.params += rp.tail + (rp.untied_head ? head : 0) + mtp_params(model_, cfg, rp);
    first.layers += cfg.mtp_layers;
  }
  if (p > 1) {
    first.in_flight = std::min(p, std::max(1, cfg.grad_accum));
    if (cfg.vpp > 1) first.in_flight *= 1 + (p - 1.0) / (p * static_cast<double>(cfg.vpp));
  }
  const LayerShape x = layer_shape(model_, cfg, share);
  const LayerBytes lb = layer_bytes(cfg, x);
  MemoryBreakdown best = stage_memory(model_, cluster_, options_, cfg, rp, x, lb, first);
  if (p > 1) {
    StageLoad last;
    last.layers = sl.last + cfg.mtp_layers;  // MTP modules keep a layer's activations each
    last.last = true;
    last.params = sl.last * rp.layer + rp.tail + head + mtp_params(model_, cfg, rp);
    const MemoryBreakdown other = stage_memory(model_, cluster_, options_, cfg, rp, x, lb, last);
    if (other.device > best.device) best = other;
  }
  if (p > 2 && sl.middle > sl.first) {
    // An accounted split's second rank: a layer more than the first, one micro-batch
    // fewer in flight (1F1B warm-up holds p - rank of them).
    StageLoad middle;
    middle.layers = sl.middle;
    middle.params = sl.middle * rp.layer;
    middle.in_flight = std::min(p - 1, std::max(1, cfg.grad_accum));
    if (cfg.vpp > 1) middle.in_flight *= 1 + (p - 2.0) / (p * static_cast<double>(cfg.vpp));
    const MemoryBreakdown other = stage_memory(model_, cluster_, options_, cfg, rp, x, lb, middle);
    if (other.device > best.device) best = other;
  }
  return best;
}

}  // namespace dsplan
