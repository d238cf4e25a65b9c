// StepTimeModel: construction, memo tables and the per-operator StepCosts hand-off.
// costs() assembles, for the most loaded pipeline stage, the operator costs (operators.h)
// and the parallelism costs (parallel_comm.h, optimizer.h); estimate() (closed_form.cc)
// is the closed form over the same numbers. Folded-in terms, so the simulator sees them:
//  - full recompute redoes the layer's forward TP communication (in layer.recompute);
//  - ZeRO-3 fetch/release bookkeeping is in layer.fwd / layer.bwd, DeepSpeed ZeRO-2/3
//    contiguous-buffer gradient copies in layer.bwd;
//  - the embedding/head TP collectives and the ZeRO-3 gather of the non-layer parameters
//    (not prefetched) are in embed_* / head_*.
#include <algorithm>
#include <cstring>
#include <optional>

#include "estimator/memory.h"
#include "estimator/overlap.h"
#include "estimator/params.h"
#include "estimator/time/step_caches.h"

namespace dsplan {

OpKey op_key(const TrainConfig& c) {
  OpKey k;
  k.tp = std::max(1, c.tp);
  k.micro_batch = c.micro_batch;
  k.seq_len = c.seq_len;
  k.sequence_parallel = c.sequence_parallel && c.tp > 1;
  k.flash = c.flash_attention;
  k.ckpt = c.checkpointing;
  k.precision = c.precision;
  k.framework = c.framework;
  k.attention = c.attention;
  // jit-fused is Megatron-Core's: elsewhere the framework's eager loss runs (one memo key).
  const bool foreign_jit = c.cross_entropy == CrossEntropy::jit_fused && c.framework != Framework::megatron;
  k.cross_entropy = foreign_jit ? CrossEntropy::eager : c.cross_entropy;
  k.norm_kernel = c.norm_kernel;
  k.fp8 = c.fp8;
  k.tf32 = c.gemm_precision() == Precision::tf32;
  k.half_model = c.ddp_half_model();
  k.fp8_recipe = c.fp8 ? c.fp8_recipe : Fp8Recipe::delayed;
  k.cp = std::max(1, c.cp);
  k.ep = std::max(1, c.ep);
  k.etp = std::max(1, c.etp);
  k.deepep = c.moe_deepep && c.ep * c.etp > 1;
  k.permute_atomic = !c.moe_permute_fusion && c.framework == Framework::megatron;
  k.megatron_unfused = c.megatron_unfused_elementwise();
  k.recompute_modules = c.checkpointing == Checkpointing::selective ? c.recompute_modules : 0;
  return k;
}

CommKey comm_key(const TrainConfig& c) {
  CommKey k;
  k.tp = std::max(1, c.tp);
  k.pp = std::max(1, c.pp);
  k.dp = std::max(1, c.dp);
  k.ep = std::max(1, c.ep) * 1024 + std::max(1, c.etp);  // both degrees, for the expert groups
  // The micro-batch and sequence reach the entry only through the pipeline's activation
  // sends (the TP collectives are the operator entry's): without a pipeline, one entry
  // serves every micro-batch.
  k.micro_batch = c.pp > 1 ? c.micro_batch : 0;
  k.seq_len = c.pp > 1 ? c.seq_len : 0;
  k.zero_stage = c.zero_stage;
  k.overlap_comm = c.zero.overlap_comm;
  k.fused_optimizer = c.fused_optimizer;
  k.megatron_fp32_grads = c.megatron_fp32_grads;
  k.fsdp_hybrid = c.fsdp_hybrid;
  k.fsdp_reduce_fp32 = c.fsdp_reduce_fp32;
  k.fsdp_version = c.fsdp_version;
  k.overflow_step = c.overflow_step;
  k.deepspeed_release = static_cast<std::uint8_t>((c.deepspeed_bf16_optimizer() ? 1 : 0) |
                                                  (c.deepspeed_zero3_sync_fetch() ? 2 : 0));
  k.fp8 = static_cast<std::uint8_t>((c.fp8 ? 1 : 0) | (c.fp8_param_gather() ? 2 : 0) | (c.nvfp4() ? 4 : 0));
  k.precision = c.precision;
  k.framework = c.framework;
  k.optimizer = c.optimizer;
  k.offload = c.offload;
  k.sequence_parallel = c.sequence_parallel && c.tp > 1;
  k.pp_split = static_cast<std::uint8_t>((c.pp_account_embedding ? 1 : 0) | (c.pp_account_loss ? 2 : 0));
  if (c.explicit_split())
    k.pp_first = c.pp_first_layers, k.pp_last = c.pp_last_layers, k.vpp = std::max(1, c.vpp);
  k.mtp = c.mtp_layers;
  k.reduce_bucket = c.zero.reduce_bucket_elems;
  k.allgather_bucket = c.zero.allgather_bucket_elems;
  k.prefetch_bucket = c.zero.prefetch_bucket_elems;
  return k;
}

// The operator key packed into one word (tp 10 bits, micro-batch 16, sequence 21, then the
// flags and enums; 64 bits): distinct keys within those ranges get distinct hashes, so they can only
// meet in a slot, not in the hash. (Mixed field by field, 8 of the 392 keys of a gpt-2.7b
// search shared a hash and evicted each other up to 12 times.) Keys beyond the ranges
// still compare whole.
std::uint64_t hash_of(const OpKey& k) {
  std::uint64_t h = 0;
  int shift = 0;
  auto put = [&](std::uint64_t v, int bits) {
    h |= (v & ((std::uint64_t(1) << bits) - 1)) << shift;
    shift += bits;
  };
  put(std::uint64_t(k.tp), 10);
  put(std::uint64_t(k.micro_batch), 16);
  put(std::uint64_t(k.seq_len), 21);
  put(std::uint64_t(k.sequence_parallel), 1);
  put(std::uint64_t(k.flash), 1);
  put(std::uint64_t(k.ckpt), 2);
  put(std::uint64_t(k.precision), 2);
  put(std::uint64_t(k.framework), 2);
  put(std::uint64_t(k.attention), 3);
  put(std::uint64_t(k.cross_entropy), 2);
  put(std::uint64_t(k.norm_kernel), 2);
  put(std::uint64_t(k.fp8), 1);
  put(std::uint64_t(k.fp8_recipe), 1);  // one search runs one recipe
  // The 64 bits are spent; context and expert parallelism (rare, > 1) are mixed in on top.
  if (k.cp > 1) h = hash_mix(h, std::uint64_t(k.cp));
  if (k.moe_share < 1.0) h = hash_mix(h, std::uint64_t(k.moe_share * (1 << 20)));
  if (k.recompute_modules != 0) h = hash_mix(h, std::uint64_t(k.recompute_modules) << 40);
  if (k.deepep) h = hash_mix(h, std::uint64_t(1) << 52);
  if (k.permute_atomic) h = hash_mix(h, std::uint64_t(1) << 53);
  if (k.megatron_unfused) h = hash_mix(h, std::uint64_t(1) << 54);
  if (k.tf32) h = hash_mix(h, std::uint64_t(1) << 55);
  if (k.half_model) h = hash_mix(h, std::uint64_t(1) << 56);
  return k.ep > 1 || k.etp > 1 ? hash_mix(h, std::uint64_t(k.ep) << 32 | std::uint64_t(k.etp)) : h;
}

// The communication key packed into four words (degrees and shapes in two, the flags and
// enums in one, the three bucket sizes folded into one) and mixed: four mixes instead of
// 22, on a path that runs for every configuration. Keys still compare whole.
std::uint64_t hash_of(const CommKey& k) {
  auto u = [](auto v) { return static_cast<std::uint64_t>(v); };
  const std::uint64_t degrees = u(k.tp) | u(k.pp) << 16 | u(k.dp) << 32 | u(k.ep) << 52;
  const std::uint64_t shape = u(k.micro_batch) | u(k.seq_len) << 32;
  const std::uint64_t flags = u(k.zero_stage) | u(k.overlap_comm + 1) << 4 | u(k.fused_optimizer + 1) << 6 |
                              u(k.precision) << 8 | u(k.framework) << 12 | u(k.optimizer) << 16 |
                              u(k.offload) << 20 | u(k.sequence_parallel) << 24 |
                              u(k.megatron_fp32_grads) << 25 | u(k.fsdp_hybrid) << 26 |
                              u(k.fsdp_reduce_fp32) << 27 | u(k.overflow_step) << 28 | u(k.fp8) << 29 |
                              u(k.fsdp_version) << 34 | u(k.pp_split) << 40 | u(k.deepspeed_release) << 44;
  std::uint64_t buckets = 0;
  for (double d : {k.reduce_bucket, k.allgather_bucket, k.prefetch_bucket}) {
    std::uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    buckets = buckets * 0x100000001b3ULL ^ bits;
  }
  std::uint64_t h = 1099511628211ULL;
  for (std::uint64_t v : {degrees, shape, flags, buckets}) h = hash_mix(h, v);
  if (k.pp_first >= 0 || k.mtp > 0)
    h = hash_mix(h, u(k.pp_first + 1) | u(k.pp_last + 1) << 16 | u(k.vpp) << 32 | u(k.mtp) << 48);
  return k.moe_share < 1.0 ? hash_mix(h, std::uint64_t(k.moe_share * (1 << 20))) : h;
}

StepTimeModel::StepTimeModel(const ModelSpec& model, const Cluster& cluster, const Efficiency& eff)
    : model_(model), cluster_(cluster), eff_(eff), caches_(std::make_unique<Caches>(cluster, eff)) {
  // Q K^T and P V per head: their mean width (MLA's query/key and value widths differ).
  attn_width_ = model.heads * 0.5 * (qk_head_dim_of(model) + v_head_dim_of(model));
  matmul_params_per_layer_ = matmul_params_per_layer(model);
}

StepTimeModel::StepTimeModel(const StepTimeModel& o)
    : model_(o.model_), cluster_(o.cluster_), eff_(o.eff_),
      matmul_params_per_layer_(o.matmul_params_per_layer_), attn_width_(o.attn_width_),
      caches_(std::make_unique<Caches>(o.cluster_, o.eff_)) {}

StepTimeModel& StepTimeModel::operator=(const StepTimeModel& o) {
  if (this != &o) *this = StepTimeModel(o);
  return *this;
}

StepTimeModel::StepTimeModel(StepTimeModel&&) noexcept = default;
StepTimeModel& StepTimeModel::operator=(StepTimeModel&&) noexcept = default;
StepTimeModel::~StepTimeModel() = default;

const OpEntry& op_entry(StepTimeModel::Caches& c, const ModelSpec& m, const Cluster& cl,
                        const Efficiency& eff, const TrainConfig& cfg) {
  OpKey k = op_key(cfg);
  k.moe_share = moe_layer_share(m, cfg);
  return c.ops.get(k, hash_of(k), [&] {
    OpKey base = k;
    base.ckpt = Checkpointing::none;
    base.recompute_modules = 0;
    OpEntry e = c.op_bases.get(base, hash_of(base), [&] {
      OpEntry b;
      b.op = operator_costs(m, cl.node.gpu, eff, base, &c.gemm);
      b.tp = parallel_comm(m, cfg, cl.node, cl.node.gpu, eff, c.coll, CommParts::tp_only);
      b.cp_ring = cp_ring(m, cfg, cl.node, c.coll);
      return b;
    });
    set_recompute(e.op, k.ckpt, k.recompute_modules);
    return e;
  });
}

const CommEntry& comm_entry(StepTimeModel::Caches& c, const ModelSpec& m, const Cluster& cl,
                            const Efficiency& eff, const TrainConfig& cfg) {
  CommKey k = comm_key(cfg);
  k.moe_share = moe_layer_share(m, cfg);
  return c.comm.get(k, hash_of(k), [&] {
    CommEntry e;
    e.comm = parallel_comm(m, cfg, cl.node, cl.node.gpu, eff, c.coll, CommParts::without_tp);
    const StageParams sp = stage_params(m, cfg);
    e.layers_per_rank = sp.layers_per_rank;
    e.mtp_projection = 2.0 * m.hidden * double(m.hidden) / std::max(1.0, matmul_params_per_layer(m));
    e.first_layers = sp.first_layers;
    e.last_layers = sp.last_layers;
    // The explicit split's middle chunks (keyed: pp_first, pp_last, vpp). An accounted split's
    // chunks need none: its one missing layer sits where the simulator's even rule puts it.
    e.middle_chunk_layers = cfg.middle_chunk_layers(m.layers);
    const bool sharded = cfg.zero_stage >= 1 || cfg.deepspeed_bf16_optimizer();
    // MoE: the experts' states shard over the ranks holding the same experts.
    const double experts = sp.expert_stage();
    double shard =
        (sp.max_stage() - experts) / (sharded ? std::max(1, cfg.shard_degree(cl.gpus_per_node())) : 1) +
        experts / (sharded ? cfg.expert_dp() : 1);
    int tensors = stage_tensors(m, sp, cfg);
    const double bw = cl.node.gpu.hbm_bw.v * eff.hbm_fraction;
    if (cfg.ddp_zero_redundancy()) {
      // ZeroRedundancyOptimizer: the rank owning the largest tensor (whole parameters are
      // assigned) steps at least that, over its share of the tensors.
      shard = std::max(shard, double(count_params(m).largest_module) / std::max(1, cfg.tp));
      tensors = (tensors + cfg.dp - 1) / std::max(1, cfg.dp);
    }
    e.opt = optimizer_costs(shard, tensors, grad_element_bytes(cfg), cfg, cl, eff);
    // Gradient clipping before it still reads the replicated gradients of the whole stage
    // and scales them in place (read + write): 3 x 4 B per parameter outside the shard.
    if (cfg.ddp_zero_redundancy())
      e.opt.step += Seconds((sp.max_stage() - shard) * 3.0 * grad_element_bytes(cfg) / bw);
    // BF16_Optimizer's gradient norm reads the whole fp32 buffer, not the shard, and the
    // step zeroes it for the next accumulation: 4 + 4 B per stage parameter.
    if (cfg.deepspeed_bf16_optimizer())
      e.opt.step += Seconds(sp.max_stage() * 8.0 / bw);
    return e;
  });
}

ActivationMoves activation_moves(const ModelSpec& m, const SystemSpec& node, const Efficiency& eff,
                                 const CollectiveModel& coll, const TrainConfig& cfg) {
  ActivationMoves a;
  const double bw = node.gpu.pcie_bw.v * eff.pcie_fraction;
  if (cfg.cpu_offload_layers > 0 && bw > 0)
    a.offload_copy = Seconds(layer_saved_activation_bytes(m, cfg) / bw);
  const bool host = cfg.ds_checkpoints_on_host(), split = cfg.ds_partitions_checkpoints();
  if (!host && !split) return a;
  // DeepSpeed (checkpointing.py): the partition is cut from the layer's input with a copy on
  // the GPU; with cpu_checkpointing that partition (or the whole input) goes to a host
  // tensor with a blocking copy, and comes back with one before the recompute, where a
  // partitioned input is all-gathered over the TP ranks first.
  const double whole = layer_checkpoint_input_bytes(m, cfg);
  const double kept = split ? whole / cfg.tp : whole;
  if (host && bw > 0) a.ckpt_fwd = a.ckpt_bwd = Seconds(kept / bw);
  if (split) {
    a.ckpt_fwd += Seconds(2.0 * kept / (node.gpu.hbm_bw.v * eff.hbm_fraction)) + eff.kernel_overhead;
    a.ckpt_bwd += coll.time(Collective::all_gather, Bytes(whole), place(cfg, node).tp);
  }
  return a;
}

StepCosts StepTimeModel::costs(const TrainConfig& run) const {
  std::optional<TrainConfig> view;  // context parallelism: the rank's view
  const TrainConfig& cfg = run.cp > 1 ? view.emplace(run.cp_rank_view()) : run;
  return assemble_costs(op_entry(*caches_, model_, cluster_, eff_, cfg),
                        comm_entry(*caches_, model_, cluster_, eff_, cfg), cfg, eff_,
                        activation_moves(model_, cluster_.node, eff_, caches_->coll, cfg));
}

OperatorSplit StepTimeModel::operator_split(const TrainConfig& run) const {
  std::optional<TrainConfig> view;  // context parallelism: the rank's view, as costs() takes
  const TrainConfig& cfg = run.cp > 1 ? view.emplace(run.cp_rank_view()) : run;
  const OpEntry& oe = op_entry(*caches_, model_, cluster_, eff_, cfg);
  const OpCosts& op = oe.op;
  OperatorSplit s{op.fwd_linear,    op.bwd_linear,      op.attn_core_fwd,
                  op.attn_core_bwd, op.head_fwd_linear, op.head_bwd_linear};
  if (cfg.cp > 1) {  // the K/V ring steps the attention passes expose (as in assemble_costs)
    const CpExposed x = cp_exposed(oe.cp_ring, cfg.cp, op.attn_core_fwd, op.attn_core_bwd);
    s.fwd_attention += x.fwd;
    s.bwd_attention += x.bwd;
  }
  return s;
}

StepCosts assemble_costs(const OpEntry& oe, const CommEntry& ce, const TrainConfig& cfg,
                         const Efficiency& eff, const ActivationMoves& moves) {
  const OpCosts& op = oe.op;
  const ParallelComm& tp = oe.tp;
  const ParallelComm& pc = ce.comm;
  StepCosts c;
  c.pp = std::max(1, cfg.pp);
  c.vpp = std::max(1, cfg.vpp);
  c.micro_batches = std::max(1, cfg.grad_accum);
  c.layers_per_rank = ce.layers_per_rank;
  c.first_layers = ce.first_layers;
  c.last_layers = ce.last_layers;
  c.middle_chunk_layers = ce.middle_chunk_layers;
  c.layer.fwd = op.fwd + pc.layer_fwd_extra + pc.layer_zero3_overhead;
  // FP8 weight casts run on a step's first micro-batch: spread as the per-step passes are.
  const Seconds fp8_weights = cfg.fp8_param_gather() ? op.fp8_weight_transpose : op.fp8_weight_cast;
  c.layer.fwd += fp8_weights * (1.0 / std::max(1, cfg.grad_accum));
  // Accumulation runs on micro-batches 2..m and the per-step passes (DDP's bucket copies,
  // DeepSpeed's reduction) once per step: spread over the m micro-batches so that the step
  // pays (m - 1) and 1 of them.
  const double m = std::max(1, cfg.grad_accum);
  c.layer.bwd = op.bwd + pc.layer_bwd_extra + pc.layer_zero3_overhead +
                pc.layer_grad_accumulate * ((m - 1.0) / m) + pc.layer_step_passes * (1.0 / m);
  c.layer.recompute = op.recompute;
  if (recomputes_layers(cfg.checkpointing)) c.layer.recompute += tp.tp_layer_fwd + tp.ep_layer_fwd;
  // Recomputing the MoE module reruns its dispatch and combine all-to-alls (moe.h).
  if (cfg.recomputes(RecomputeModule::moe)) c.layer.recompute += tp.ep_layer_fwd;
  // Context parallelism: the K/V ring steps each attention pass (and its recompute) exposes.
  if (cfg.cp > 1) {
    const CpExposed x = cp_exposed(oe.cp_ring, cfg.cp, op.attn_core_fwd, op.attn_core_bwd);
    c.layer.fwd += x.fwd;
    c.layer.bwd += x.bwd;
    if (cfg.checkpointing != Checkpointing::none) c.layer.recompute += x.fwd;
  }
  // Block recompute: n of the stage's L layers rerun their forward; every layer carries
  // n/L of it (the step total is exact, its placement among the layers is averaged).
  if (cfg.checkpointing == Checkpointing::block)
    c.layer.recompute = c.layer.recompute * cfg.recompute_share(ce.layers_per_rank);
  c.layer.tp_comm_fwd = tp.tp_layer_fwd;
  c.layer.tp_comm_bwd = tp.tp_layer_bwd;
  c.layer.ep_comm_fwd = tp.ep_layer_fwd;
  c.layer.ep_comm_bwd = tp.ep_layer_bwd;
  // Megatron (since 2021-09) launches each column-parallel linear's input-gradient
  // all-reduce (reduce-scatter with SP) asynchronously and computes that linear's weight
  // gradient meanwhile (ColumnParallelLinearWithAsyncAllreduce, later
  // LinearWithGradAccumulationAndAsyncCommunication): only what outlasts the GEMM shows,
  // and what the GEMM loses beside the collective (estimator/overlap.h).
  if (cfg.megatron_async_tp() && cfg.tp > 1) {
    auto outlasts = [&](Seconds comm, Seconds gemm) {
      return contended_window(gemm, comm, eff.overlap_compute_loss) - gemm;
    };
    c.layer.tp_comm_bwd = tp.tp_bwd_blocking + outlasts(tp.tp_bwd_input_grad, op.wgrad_qkv) +
                          (tp.tp_mlp ? outlasts(tp.tp_bwd_input_grad, op.wgrad_fc1) : Seconds{});
  }
  // MoE's all-to-alls block the compute stream like the TP collectives (moe.h).
  c.layer.tp_comm_fwd += tp.ep_layer_fwd;
  c.layer.tp_comm_bwd += tp.ep_layer_bwd;
  c.layer.param_gather = pc.layer_param_gather;
  c.layer.grad_reduce = pc.layer_grad_reduce;
  c.layer.grad_reduce_replica = pc.layer_grad_reduce_replica;
  c.layer.grad_bytes = pc.layer_grad_bytes;
  c.embed_fwd = op.embed_fwd + tp.tp_embed_fwd + pc.nonlayer_gather;
  c.embed_bwd = op.embed_bwd + pc.nonlayer_gather;
  c.head_fwd = op.head_fwd + tp.tp_head_fwd;
  c.head_bwd = op.head_bwd + tp.tp_head_bwd;
  // Train metrics run after each micro-batch's backward on the stage holding the logits
  // (Composer's _eval_train_metrics); priced with the head's backward, which that stage
  // runs once per micro-batch as well.
  c.head_bwd += op.logit_metric * double(std::max(0, cfg.logit_metrics));
  c.p2p = pc.p2p;
  c.p2p_blocking = !cfg.megatron_overlap_p2p();
  c.p2p_exchange = cfg.framework == Framework::deepspeed && cfg.pp > 1 && cfg.vpp <= 1;
  if (c.p2p_exchange) c.p2p_gather = pc.p2p_gather;
  c.embed_grad_sync = pc.embed_grad_sync;
  c.bucket_bytes = pc.bucket_bytes;
  c.overlap_grad_reduce = pc.overlap;
  c.zero3_prefetch = pc.prefetch;
  c.gather_shares_reduce = pc.layer_param_gather.v > 0.0 && pc.overlap;
  c.grad_reduce_every_micro_batch = pc.every_micro_batch;
  c.grad_reduce_tail = pc.grad_reduce_tail;
  c.grad_reduce_tail_replica = pc.grad_reduce_tail_replica;
  c.param_allgather = pc.param_allgather;
  c.optimizer = ce.opt.step;
  c.offload_d2h = ce.opt.d2h;
  c.offload_h2d = ce.opt.h2d;
  c.overlap_compute_loss = eff.overlap_compute_loss;
  c.host.layer_fwd = op.host.fwd + pc.layer_zero3_host;
  c.host.layer_bwd = op.host.bwd + pc.layer_zero3_host;
  // A recomputed forward fetches its submodules again (ZeRO-3's hooks run on it too).
  const Seconds recompute_host =
      op.host.recompute + (recomputes_layers(cfg.checkpointing) ? pc.layer_zero3_host : Seconds{});
  c.host.layer_recompute = cfg.checkpointing == Checkpointing::block
                               ? recompute_host * cfg.recompute_share(ce.layers_per_rank)
                               : recompute_host;
  c.host.embed_fwd = op.host.embed_fwd;
  c.host.embed_bwd = op.host.embed_bwd;
  c.host.head_fwd = op.host.head_fwd;
  c.host.head_bwd = op.host.head_bwd + op.host.logit_metric * double(std::max(0, cfg.logit_metrics));
  c.host.optimizer = ce.opt.host;
  // Multi-token prediction (TrainConfig::mtp_layers; Megatron-Core's MultiTokenPredictionBlock):
  // each module on the last stage normalises the hidden state and the next token's
  // embedding, projects the pair (2h -> h, priced at its share of a layer's linear GEMMs),
  // runs one more transformer layer (the rank's layer, its collectives exposed) and the
  // output head and loss again.
  if (cfg.mtp_layers > 0) {
    const double n = cfg.mtp_layers, r = ce.mtp_projection;
    const Seconds head_fwd = c.head_fwd, head_bwd = c.head_bwd;
    c.head_fwd += (c.layer.fwd + c.layer.tp_comm_fwd + op.fwd_linear * r + head_fwd) * n;
    c.head_bwd += (c.layer.bwd + c.layer.tp_comm_bwd + op.bwd_linear * r + head_bwd) * n;
    c.host.head_fwd += (op.host.fwd + op.host.head_fwd) * n;
    c.host.head_bwd += (op.host.bwd + op.host.head_bwd) * n;
  }
  // Megatron's CPU activation offloading (docs/model.md §4.5 "Activation offloading"): each
  // offloaded layer's saved activations cross the host link once after its forward and
  // once before its backward, on a copy stream beside the next layer's compute, so a pass
  // waits only for what the copy outlasts; spread over the rank's layers as the other
  // per-layer extras are.
  const Seconds copy = moves.offload_copy;
  if (copy.v > 0) {
    const double share = double(cfg.cpu_offload_layers) / std::max(1, c.layers_per_rank);
    c.layer.fwd += Seconds(std::max(0.0, (copy - c.layer.fwd - c.layer.tp_comm_fwd).v) * share);
    c.layer.bwd += Seconds(std::max(0.0, (copy - c.layer.bwd - c.layer.tp_comm_bwd).v) * share);
  }
  // DeepSpeed's checkpoint options (docs/model.md §4.5): blocking, so each recomputed layer's
  // forward and recompute wait for the whole move; block recompute spreads its n layers' moves
  // over the stage as it spreads their recompute.
  if (moves.ckpt_fwd.v > 0 || moves.ckpt_bwd.v > 0) {
    const double share = cfg.recompute_share(c.layers_per_rank);
    c.layer.fwd += moves.ckpt_fwd * share;
    c.layer.recompute += moves.ckpt_bwd * share;
  }
  return c;
}

}  // namespace dsplan
