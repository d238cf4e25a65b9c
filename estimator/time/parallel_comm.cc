// Parallelism communication costs; see parallel_comm.h and docs/model.md §4 Step time.
// Framework behaviour assumed (gradient element bytes and bucket sizes):
//  - DeepSpeed reduces 16-bit gradients in buckets of reduce_bucket_size elements,
//    overlapping with backward only when overlap_comm is on (default: stage 3 only).
//  - torch DDP (framework ddp) keeps fp32 parameters under autocast, so it all-reduces
//    fp32 gradients in 25 MiB buckets overlapped with backward.
//  - Megatron all-reduces its contiguous gradient buffer once after the backward; bf16
//    accumulates and reduces fp32 main_grads, fp16 reduces 16-bit gradients. With
//    Megatron-Core's --overlap-grad-reduce (overlap_comm on) it reduces buckets of
//    max(40M, 1M x dp) elements during the last micro-batch's backward, and with
//    --overlap-param-gather the distributed optimizer's all-gather overlaps the next
//    forward: only the first bucket's gather is exposed.
//  - FSDP reduce-scatters per transformer layer (one wrapped unit per layer), overlapped.
//  - DeepSpeed ZeRO-1/2 all-reduce each full bucket and keep their partition (v0.5.8 and
//    v0.16.4 defaults; docs/model.md §4.4); ZeRO-3 reduce-scatters.
#include "estimator/time/parallel_comm.h"

#include <algorithm>
#include <cmath>

#include "estimator/params.h"
#include "estimator/time/fp8.h"
#include "estimator/time/gemm.h"
#include "estimator/time/mla.h"
#include "estimator/time/moe.h"

namespace dsplan {

namespace {

constexpr double kDdpBucketBytes = 25.0 * 1024 * 1024;
// Megatron-Core DDP bucket with overlap_grad_reduce: max(40M, 1M x dp) elements
// (megatron/core/distributed/distributed_data_parallel.py).
double megatron_bucket_elems(int dp) { return std::max(4.0e7, 1.0e6 * dp); }
// DeepSpeed's ZeRO bookkeeping runs in Python on the critical path. ZeRO-2/3 run a hook
// per gradient tensor (partition lookup, copy into the reduction buffer, launch); ZeRO-3
// also fetches/releases every submodule (hooks are registered on all of them: linears,
// norms, dropouts, containers) before its forward and backward. Per-event costs are
// estimates for DeepSpeed 0.5-0.8: the z1->z2 and z0->z3 throughput gaps of the
// DeepSpeedExamples autotuning tables imply ~0.15 ms per tensor for GPT-2 (12 tensors a
// layer), ~0.3 ms for DistilBERT and BERT-base (16: separate Q, K and V linears), and
// ~0.8 ms per submodule. Calibration should replace them. The hooks run once per parameter
// tensor of the model code (layer_tensors) and once per submodule: 12 in a GPT-2 block,
// one more for each linear a fused layout would not have.
constexpr int kModulesPerLayer = 12;  // submodules carrying ZeRO-3 hooks, fused layout
constexpr Seconds kZeroGradHook = us(150);
constexpr Seconds kZero3ModuleHook = us(500);

Seconds bucketed(const CollectiveModel& c, Collective k, double total, double bucket, CommGroup g) {
  if (total <= 0 || g.ranks <= 1) return Seconds{};
  bucket = std::max(1.0, std::min(bucket, total));
  const double full = std::floor(total / bucket);
  const double rem = total - full * bucket;
  Seconds t = c.time(k, Bytes(bucket), g) * full;
  if (rem > 0) t += c.time(k, Bytes(rem), g);
  return t;
}

void tp_costs(ParallelComm& o, const ModelSpec& m, const TrainConfig& cfg, const Placement& pl,
              const CollectiveModel& c) {
  if (cfg.tp <= 1) return;
  const double elems = double(cfg.micro_batch) * cfg.seq_len * m.hidden;
  const double act = elems * element_bytes(cfg.precision);
  const Seconds ar = c.time(Collective::all_reduce, Bytes(act), pl.tp);
  const Seconds ag = c.time(Collective::all_gather, Bytes(act), pl.tp);
  const Seconds rs = c.time(Collective::reduce_scatter, Bytes(act), pl.tp);
  const Seconds pair = cfg.sequence_parallel ? ag + rs : ar;
  // FP8 linears: Transformer Engine's fused norm writes the QKV and FC1 inputs in FP8
  // (LayerNormLinear, LayerNormMLP), so with SP their forward all-gathers move 1 byte per
  // element (NVFP4: 9/16). The reduce-scatters (16-bit GEMM outputs) and the backward's
  // gathers of the output gradients keep 16 bits.
  const Seconds ag_in =
      cfg.fp8 && cfg.sequence_parallel
          ? c.time(Collective::all_gather, Bytes(elems * linear_operand_bytes(cfg.fp8_recipe)), pl.tp)
          : ag;
  // An MoE layer's routed experts take the rank's sequence-parallel slice whole (expert
  // TP 1): only shared experts keep the MLP's pair of collectives.
  // A rank with dense layers among its MoE ones (moe_layer_share) runs both kinds' pairs.
  const double share = moe_layer_share(m, cfg);
  const double pairs = !is_moe(m) || m.shared_ffn > 0 ? 2.0 : share * 1.0 + (1.0 - share) * 2.0;
  o.tp_mlp = pairs > 1.0;
  o.tp_layer_fwd = cfg.sequence_parallel ? (ag_in + rs) * pairs : pair * pairs;
  o.tp_layer_bwd = pair * pairs;
  if (is_mla(m)) {
    // MLA (mla.h): the attention's input collectives carry the latents, not the hidden
    // states: SP's forward all-gather and backward reduce-scatter, or without SP the
    // backward all-reduce of the up projections' input gradients.
    const Bytes latent(double(cfg.micro_batch) * cfg.seq_len * mla_gathered_width(m) *
                       element_bytes(cfg.precision));
    if (cfg.sequence_parallel) {
      o.tp_layer_fwd += c.time(Collective::all_gather, latent, pl.tp) - ag_in;
      o.tp_layer_bwd += c.time(Collective::reduce_scatter, latent, pl.tp) - rs;
    } else {
      o.tp_layer_bwd += c.time(Collective::all_reduce, latent, pl.tp) - ar;
    }
  }
  o.tp_bwd_input_grad = cfg.sequence_parallel ? rs : ar;
  o.tp_bwd_blocking = cfg.sequence_parallel ? ag * pairs : Seconds{};
  o.tp_embed_fwd = cfg.sequence_parallel ? rs : ar;
  // Head: gather the input (SP), three small all-reduces of vocab-parallel cross-entropy
  // (max, sum-exp, target logit: b s fp32 values each); backward reduces the input grad.
  const Bytes ce(double(cfg.micro_batch) * cfg.seq_len * 4.0);
  o.tp_head_fwd = (cfg.sequence_parallel ? ag : Seconds{}) +
                  (m.vocab_logits ? c.time(Collective::all_reduce, ce, pl.tp) * 3.0 : Seconds{});
  o.tp_head_bwd = cfg.sequence_parallel ? rs : ar;
}

// MoE: each layer's dispatch and combine all-to-alls over the ep ranks, each rank sending
// its Ts x topk token copies (moe.h), or DeepEP's deduplicated copies (deepep_time), twice
// forward and twice backward.
void ep_costs(ParallelComm& o, const ModelSpec& m, const TrainConfig& cfg, const Placement& pl,
              const CollectiveModel& c) {
  if (!is_moe(m) || cfg.ep * cfg.etp <= 1) return;
  const double tokens =
      double(cfg.micro_batch) * cfg.seq_len / (cfg.sequence_parallel ? std::max(1, cfg.tp) : 1);
  const double bytes = tokens * m.topk * m.hidden * element_bytes(cfg.precision);
  o.ep_layer_fwd = cfg.moe_deepep ? deepep_time(c, m, tokens, element_bytes(cfg.precision), pl.ep) * 2.0
                                  : all_to_all_time(c, bytes, pl.ep) * 2.0;
  // Expert TP: the etp ranks all-gather the tokens the dispatch brought (etp x bytes in all)
  // before the experts and reduce-scatter the experts' outputs after them; the backward
  // runs the mirror pair.
  if (cfg.etp > 1) {
    const Bytes gathered(bytes * cfg.etp);
    o.ep_layer_fwd += c.time(Collective::all_gather, gathered, pl.etp) +
                      c.time(Collective::reduce_scatter, gathered, pl.etp);
  }
  o.ep_layer_fwd *= moe_layer_share(m, cfg);  // the MoE layers' share of the rank's layers
  o.ep_layer_bwd = o.ep_layer_fwd;
}

void dp_costs(ParallelComm& o, const ModelSpec& m, const TrainConfig& cfg, const StageParams& sp,
              const Placement& pl, const CollectiveModel& c) {
  const double g = grad_element_bytes(cfg);
  const double e = element_bytes(cfg.precision);
  const int L = sp.layers_per_rank;
  double bucket = cfg.zero.reduce_bucket_elems * g;
  if (cfg.framework == Framework::ddp) bucket = kDdpBucketBytes;
  if (cfg.framework == Framework::megatron)
    bucket = cfg.megatron_overlap() ? megatron_bucket_elems(cfg.dp) * g : sp.max_stage() * g;
  if (cfg.framework == Framework::fsdp || cfg.megatron_fsdp()) bucket = sp.layer * g;
  o.bucket_bytes = Bytes(bucket);
  o.layer_grad_bytes = Bytes(sp.layer * g);
  o.every_micro_batch = cfg.zero_stage >= 2;
  o.overlap = cfg.framework == Framework::ddp || cfg.framework == Framework::fsdp || cfg.megatron_overlap() ||
              cfg.megatron_fsdp() ||
              (cfg.framework == Framework::deepspeed && cfg.zero.overlap(cfg.zero_stage));
  o.prefetch = cfg.zero_stage == 3 && o.overlap;
  if (pl.dp.ranks <= 1) return;
  // ZeRO-1 reduces once at the accumulation boundary, ZeRO-2/3 every micro-batch. DeepSpeed
  // ZeRO-1/2 all-reduce each full bucket and keep their partition of the result (v0.5.8
  // buffered_reduce_fallback; v0.16.4 allreduce_bucket, use_multi_rank_bucket_allreduce on
  // by default): a reduce-scatter's result at an all-reduce's volume. ZeRO-3, Megatron's
  // distributed optimizer and FSDP reduce-scatter.
  const bool ds_allreduce = cfg.framework == Framework::deepspeed && cfg.zero_stage <= 2;
  const Collective red = cfg.zero_stage == 0 || ds_allreduce || cfg.ddp_zero_redundancy()
                             ? Collective::all_reduce
                             : Collective::reduce_scatter;
  // FSDP hybrid sharding gathers and reduce-scatters inside a node's shard group, then
  // all-reduces each rank's reduced shard across the nodes (one rank per node).
  const CommGroup& shard_group = pl.dp_shard;
  auto replica_reduce = [&](double bytes) {
    return pl.dp_replicas.ranks > 1
               ? c.time(Collective::all_reduce, Bytes(bytes / shard_group.ranks), pl.dp_replicas)
               : Seconds{};
  };
  if (cfg.zero_stage == 3) {
    o.layer_grad_reduce_replica = replica_reduce(sp.layer * g);
    o.layer_grad_reduce = bucketed(c, red, sp.layer * g, bucket, shard_group) + o.layer_grad_reduce_replica;
    // Megatron-FSDP gathers a layer (its FSDP unit) in one all-gather, in FP8 (NVFP4) with
    // FP8 parameter gather; DeepSpeed in prefetch-bucket pieces.
    const double pf = cfg.megatron_fsdp() ? sp.layer_gathered : std::max(1.0, cfg.zero.prefetch_bucket_elems);
    const double n = std::max(1.0, std::ceil(sp.layer_gathered / pf));
    const double le = cfg.fp8_param_gather() ? linear_operand_bytes(cfg.fp8_recipe) : e;
    o.layer_param_gather = c.time(Collective::all_gather, Bytes(sp.layer_gathered * le / n), shard_group) * n;
    o.nonlayer_gather = c.time(Collective::all_gather, Bytes(sp.nonlayer() * e), shard_group);
  } else {
    // MoE: the experts' gradients reduce over the ranks holding the same experts.
    const double experts = L * sp.layer_expert * g, layers = L * sp.layer * g - experts;
    o.layer_grad_reduce_replica = replica_reduce(layers) / double(L);
    o.layer_grad_reduce =
        (bucketed(c, red, layers, bucket, shard_group) + bucketed(c, red, experts, bucket, pl.edp)) /
            double(L) +
        o.layer_grad_reduce_replica;
  }
  o.grad_reduce_tail_replica = replica_reduce(sp.nonlayer() * g);
  o.grad_reduce_tail = bucketed(c, red, sp.nonlayer() * g, bucket, shard_group) + o.grad_reduce_tail_replica;
  if (cfg.overflow_step) return;  // an fp16 overflow step updates nothing: no parameters to gather
  // Bytes per gathered parameter: e, or with FP8 parameter gather 1 for the layers' weights
  // (NVFP4: 9/16).
  const double pe = cfg.fp8_param_gather()
                        ? (L * sp.layer * linear_operand_bytes(cfg.fp8_recipe) + sp.nonlayer() * e) /
                              std::max(1.0, sp.max_stage())
                        : e;
  if (cfg.ddp_zero_redundancy()) {
    // torch's ZeroRedundancyOptimizer on DDP: after its step every rank broadcasts the
    // parameters it owns, one broadcast per parameter (parameters_as_bucket_view False, the
    // default), fp32 (DDP keeps fp32 parameters under autocast). Each parameter is sent
    // once: the stage's tensors, 4 B per element.
    const int n = std::max(1, stage_tensors(m, sp, cfg));
    o.param_allgather = c.time(Collective::broadcast, Bytes(sp.max_stage() * 4.0 / n), pl.dp) * double(n);
  } else if (cfg.megatron_overlap() && cfg.zero_stage == 1) {
    const double first = std::min(sp.max_stage(), megatron_bucket_elems(cfg.dp)) * pe;
    o.param_allgather = c.time(Collective::all_gather, Bytes(first), pl.dp);
  } else if (cfg.zero_stage == 1 || cfg.zero_stage == 2 || cfg.deepspeed_bf16_optimizer()) {
    const double experts = sp.expert_stage(), bucket_bytes = cfg.zero.allgather_bucket_elems * e;
    o.param_allgather =
        bucketed(c, Collective::all_gather, (sp.max_stage() - experts) * pe, bucket_bytes, pl.dp) +
        bucketed(c, Collective::all_gather, experts * pe, bucket_bytes, pl.edp);
  }
}

// DeepSpeed ZeRO-2/3 Python bookkeeping: a hook per gradient tensor, and ZeRO-3's fetch and
// release of every submodule (the buffer copy the hooks make is in gradient_handling).
void zero_overheads(ParallelComm& o, const ModelSpec& m, const TrainConfig& cfg) {
  if (cfg.framework != Framework::deepspeed || cfg.zero_stage < 2) return;
  const bool fused_code = cfg.megatron_layers();
  o.layer_bwd_extra += kZeroGradHook * double(layer_tensors(m, fused_code));
  if (cfg.zero_stage == 3) {
    const int extra_modules = layer_linears(m, fused_code).total() - LayerLinears{}.total();
    const Seconds hooks = kZero3ModuleHook * double(kModulesPerLayer + extra_modules);
    // Until 0.6.0 each fetch all-gathered synchronously and synchronised the device
    // (stage3.py's _synchronize_communication), so the hooks block the GPU's stream. Since
    // then (PR 1453, PartitionedParameterCoordinator) a fetch makes the compute stream wait
    // on the all-gather's event and the host goes on: the same Python work is host time,
    // which the GPU's queue hides unless it outlasts the layer (estimator/host_stall.h).
    (cfg.deepspeed_zero3_sync_fetch() ? o.layer_zero3_overhead : o.layer_zero3_host) = hooks;
  }
}

// Memory passes over a layer's gradients outside the GEMMs (docs/model.md §4.4, "Gradient
// handling"), bytes per parameter:
//  - accumulation: autograd's AccumulateGrad adds each micro-batch's gradient into .grad
//    (read 2, write 1 of the gradient dtype) for every micro-batch after the first. torch
//    DDP (fp32 .grad under autocast) and DeepSpeed ZeRO-0/1 do this. Megatron fuses it into
//    the weight-gradient GEMM (gradient_accumulation_fusion: beta = 1 into main_grad).
//    ZeRO-2/3 and FSDP accumulate only their 1/dp shard, which is left out.
//  - torch autocast: the weight-gradient GEMM writes 16 bits and its cast's backward
//    widens it to the fp32 parameter's dtype (read 2, write 4), every micro-batch. That
//    pass is priced with the layer's operators (operators.cc, one kernel per tensor), not
//    here.
//  - torch DDP (gradient_as_bucket_view=False, the default) copies each gradient into its
//    bucket before the all-reduce and back after it (2 x (read 4 + write 4)), once per
//    step (accumulation micro-batches run under no_sync).
//  - PyTorch 1.x's Module/Optimizer.zero_grad() defaults to set_to_none=False (2.0 made it
//    True): each step zeroes every .grad (write g, a kernel per tensor), and the first
//    micro-batch's AccumulateGrad then adds into the zeroed tensor (`variable_grad +=
//    new_grad`: read 2g, write g) instead of adopting the new gradient. The Hugging Face
//    Trainer loops of 2021-22 call model.zero_grad() so; DDP rows that run PyTorch 2's
//    defaults (TrainConfig::ddp_pytorch2_defaults) set the gradients to None.
//  - FSDP1 (flat parameters) concatenates each unit's gradients into its flat gradient:
//    the original parameters are views of split() of the flat parameter, and autograd's
//    SplitWithSizesBackward runs a cat (read w, write w), every micro-batch.
//  - FSDP divides the unsharded gradient in place before the reduce-scatter
//    (_div_if_needed with the gradient pre-divide factor): read + write, every micro-batch.
//    With reduce_dtype float32 (TrainConfig::fsdp_reduce_fp32) the 16-bit gradient is
//    first copied into the fp32 reduce-scatter input (FSDP2's chunk_cat, FSDP1's cast):
//    read 2, write 4, and the division runs on the fp32 copy.
//  - FSDP2 (fully_shard, TrainConfig::fsdp_version 2) keeps per-parameter tensors, so
//    every all-gather is followed by its copy-out into the unsharded parameters
//    (split_with_sizes_copy: read w, write w per gathered parameter) on the compute stream:
//    once per micro-batch in forward, and again in backward when it reshards after forward
//    (stage 3). Its reduce-scatter input is always a copy (chunk_cat: read the gradient,
//    write it in the reduce dtype); FSDP1's flat gradient needs one only to widen it.
//  - DeepSpeed ZeRO-2/3 copy each gradient into the contiguous reduction buffer: read +
//    write, every micro-batch.
//  - DeepSpeed's reductions (engine allreduce_bucket for ZeRO-0, stage_1_and_2
//    allreduce_bucket/average_tensor for ZeRO-1/2, reduce_scatter_coalesced for ZeRO-3;
//    v0.5.8 and v0.16.4 alike) flatten the bucket's gradients into one tensor (torch.cat:
//    read g, write g) and scale it by 1/dp in place (read g, write g); ZeRO-0/1 also copy
//    the reduced bucket back into the gradients (read g, write g). ZeRO-0/1 reduce once
//    per step, ZeRO-2/3 every micro-batch; the engine runs them at any dp, 1 included.
//    BF16_Optimizer reduces its flat fp32 buffer: flatten and copy-back are views, the
//    scale reads and writes 4 B.
//  - DeepSpeed bf16 without ZeRO (BF16_Optimizer) casts each micro-batch's bf16 gradient
//    to fp32 and adds it into the fp32 buffer: 18 B/param, every micro-batch.
//  - Megatron's data-parallel reduction (megatron/model/distributed.py, later
//    megatron/core/distributed): until 2021-08 (e8fb052f81 made contiguous buffers the
//    default) fp16/fp32 gradients were flattened, scaled by 1/dp and copied back (3 x 2g);
//    since then the contiguous buffer is scaled in place (2g), which Megatron-Core skips
//    when the factor is 1 (dp = 1). Once per step; the older code runs at any dp.
void gradient_handling(ParallelComm& o, const ModelSpec& m, const TrainConfig& cfg, const StageParams& sp,
                       const GpuSpec& gpu, const Efficiency& eff) {
  const double g = grad_element_bytes(cfg);
  const double bw = gpu.hbm_bw.v * eff.hbm_fraction;
  auto pass = [&](double bytes_per_param, int kernels) {
    return Seconds(sp.layer * bytes_per_param / bw) + eff.kernel_overhead * kernels;
  };
  const int tensors = layer_tensors(m, cfg.megatron_layers());
  switch (cfg.framework) {
    case Framework::ddp:
      // (autocast's widening of the 16-bit weight gradients is an operator cost: operators.cc)
      o.layer_grad_accumulate = pass(3.0 * g, tensors);
      if (cfg.dp > 1) o.layer_step_passes = pass(2.0 * 2.0 * g, 2 * tensors);
      if (!cfg.ddp_pytorch2_defaults()) o.layer_step_passes += pass(g + 3.0 * g, 2 * tensors);
      break;
    case Framework::deepspeed:
      if (cfg.deepspeed_bf16_optimizer()) {
        // BF16_Optimizer adds every micro-batch's bf16 gradients into its fp32 buffer
        // (update_hp_grads / accumulate_hp_grads_and_remove_lp: hp.add_(lp.to(fp32))):
        // the cast reads 2 and writes 4, the add reads 4 + 4 and writes 4.
        o.layer_bwd_extra += pass(2.0 + 4.0 + 4.0 + 4.0 + 4.0, 2 * tensors);
        o.layer_step_passes = pass(4.0 + 4.0, 0);  // the reduction's in-place scale
      } else if (cfg.zero_stage <= 1) {
        o.layer_grad_accumulate = pass(3.0 * g, tensors);
        o.layer_step_passes = pass(3.0 * 2.0 * g, tensors);  // flatten, scale, copy back
      } else {
        o.layer_bwd_extra += pass(2.0 * g + 2.0 * 2.0 * g, tensors);  // + flatten, scale
      }
      break;
    case Framework::fsdp: {
      if (cfg.dp <= 1) break;
      const double w = element_bytes(cfg.precision);
      const bool widen = g > w;  // fp32 reduce of 16-bit gradients
      const bool copy_in = widen || cfg.fsdp_version == 2;
      // FSDP1's unsharded parameters are views of split() of the flat parameter, so the
      // backward's SplitWithSizesBackward concatenates their gradients into the flat
      // gradient (read w, write w); FSDP2 keeps per-parameter gradients.
      const bool split_cat = cfg.fsdp_version != 2;
      o.layer_bwd_extra += pass(2.0 * g + (copy_in ? w + g : 0.0) + (split_cat ? 2.0 * w : 0.0),
                                (copy_in ? 2 : 1) + (split_cat ? 1 : 0));
      if (cfg.fsdp_version == 2) {
        const Seconds copy_out =
            Seconds(sp.layer_gathered * 2.0 * w / bw) + eff.kernel_overhead;
        o.layer_fwd_extra += copy_out;
        if (cfg.zero_stage == 3) o.layer_bwd_extra += copy_out;
      }
      break;
    }
    case Framework::megatron: {
      // bf16 (from 2021-03) always accumulated into the fp32 contiguous buffer.
      const bool flattened =
          cfg.megatron_release != 0 && cfg.megatron_release < 202108 && cfg.precision != Precision::bf16;
      const bool scales = cfg.dp > 1 || (cfg.megatron_release != 0 && cfg.megatron_release < 202312);
      if (flattened)
        o.layer_step_passes = pass(3.0 * 2.0 * g, tensors);
      else if (scales)
        o.layer_step_passes = pass(2.0 * g, 0);
      break;
    }
  }
}

}  // namespace

Placement place(const TrainConfig& cfg, const SystemSpec& node) {
  const int gpn = std::max(1, node.gpus_per_node);
  const int tp = std::max(1, cfg.tp), pp = std::max(1, cfg.pp), dp = std::max(1, cfg.dp);
  Placement p;
  p.tp = {tp, std::min(tp, gpn)};
  // Stages are contiguous blocks of tp x dp ranks; once the job spans more than one node,
  // some boundary between adjacent stages (and the first/last pair) crosses a node.
  const bool pp_inter = pp > 1 && tp * dp * pp > gpn;
  p.pp_p2p = {2, pp_inter ? 1 : 2};
  p.embed = {2, pp_inter ? 1 : 2};
  const int dp_rpn = tp >= gpn ? 1 : std::min(dp, gpn / tp);
  p.dp = {dp, std::max(1, dp_rpn)};
  const int shard = cfg.shard_degree(gpn);
  p.dp_shard = shard < dp ? CommGroup{shard, shard} : p.dp;
  p.dp_replicas = {shard < dp ? dp / shard : 1, 1};
  // The expert grid: etp innermost, then ep (stride etp), then the expert data-parallel
  // ranks (stride ep x etp).
  const int etp = std::max(1, cfg.etp), ep = std::max(1, cfg.ep), edp = cfg.expert_dp();
  p.etp = {etp, std::min(etp, gpn)};
  p.ep = {ep, etp >= gpn ? 1 : std::min(ep, gpn / etp)};
  p.edp = {edp, ep * etp >= gpn ? 1 : std::min(edp, gpn / (ep * etp))};
  return p;
}

int stage_tensors(const ModelSpec& m, const StageParams& sp, const TrainConfig& cfg) {
  // The layers' tensors, plus the embeddings, final norm and head.
  return sp.layers_per_rank * layer_tensors(m, cfg.megatron_layers()) + 5;
}

double StageParams::max_stage() const {
  // The middle ranks' layers bound it when an accounted split gives the ends fewer.
  return std::max(
      {first_layers * layer + first_extra, last_layers * layer + last_extra, layers_per_rank * layer});
}
double StageParams::nonlayer() const { return std::max(first_extra, last_extra); }

StageParams stage_params(const ModelSpec& m, const TrainConfig& cfg) {
  const ParamCounts c = count_params(m);
  const double t = std::max(1, cfg.tp);
  const int pp = std::max(1, cfg.pp);
  StageParams s;
  const TrainConfig::StageLayers sl = cfg.stage_layers(m.layers);
  s.layers_per_rank = sl.most();
  s.first_layers = sl.first;
  s.last_layers = sl.last;
  // MoE with dense layers: the busiest rank's blend of the two kinds (moe_layer_share).
  const double share = is_moe(m) ? moe_layer_share(m, cfg) : 1.0;
  const double mlp = share * double(c.mlp) + (1.0 - share) * double(c.dense_mlp);
  s.layer_expert = share * double(c.experts) / (std::max(1, cfg.ep) * std::max(1, cfg.etp));
  const double rep = tp_replicated_attention(m);  // MLA's down projections
  s.layer = (c.attention - rep + mlp) / t + rep + c.layer_norms + share * c.router + s.layer_expert;
  s.layer_gathered = (c.attention - rep + mlp) / t + rep;
  const double word = double(padded_vocab(m, cfg.tp)) * m.hidden / t;
  const double first = word + c.other_embedding;
  double last = c.final_norm + c.pooler + c.lm_head / t;
  if (m.tied_embeddings && pp > 1 && m.vocab_logits) last += word;
  // Multi-token prediction: each module's layer, its 2h x h projection and two norms, and
  // (pp > 1, untied) the word embedding it looks the next tokens up in, on the last stage.
  if (cfg.mtp_layers > 0) {
    last += cfg.mtp_layers * (s.layer + mtp_projection_params(m, cfg.tp));
    if (!m.tied_embeddings && pp > 1) last += word;
  }
  s.first_extra = pp == 1 ? first + last : first;
  s.last_extra = pp == 1 ? first + last : last;
  return s;
}

double grad_element_bytes(const TrainConfig& cfg) {
  if (cfg.precision == Precision::fp32 || cfg.deepspeed_bf16_optimizer()) return 4.0;
  switch (cfg.framework) {
    case Framework::ddp:
      return cfg.ddp_half_model() ? 2.0 : 4.0;  // O2, pure16: a 16-bit model's gradients
    case Framework::megatron:
      // fp32 main_grad with bf16 (unless a 16-bit buffer is configured); fp16 reduces
      // 16-bit gradients.
      return cfg.precision == Precision::bf16 && cfg.megatron_fp32_grads ? 4.0 : 2.0;
    case Framework::fsdp: return cfg.fsdp_reduce_fp32 ? 4.0 : 2.0;
    default: return 2.0;
  }
}

ParallelComm parallel_comm(const ModelSpec& m, const TrainConfig& cfg, const SystemSpec& node,
                           const GpuSpec& gpu, const Efficiency& eff, const CollectiveModel& coll,
                           CommParts parts) {
  ParallelComm o;
  const Placement pl = place(cfg, node);
  if (parts != CommParts::without_tp) {
    tp_costs(o, m, cfg, pl, coll);
    ep_costs(o, m, cfg, pl, coll);
  }
  if (parts == CommParts::tp_only) return o;
  const StageParams sp = stage_params(m, cfg);
  dp_costs(o, m, cfg, sp, pl, coll);
  gradient_handling(o, m, cfg, sp, gpu, eff);
  zero_overheads(o, m, cfg);
  const double e = element_bytes(cfg.precision);
  if (cfg.offload == Offload::all && cfg.zero_stage == 3 && gpu.pcie_bw.v > 0) {
    // Parameters live in host memory: each gather first copies the shard up over PCIe.
    const double shard = sp.layer_gathered * e / std::max(1, cfg.dp);
    o.layer_param_gather += Seconds(shard / (gpu.pcie_bw.v * eff.pcie_fraction));
  }
  if (cfg.pp > 1) {
    const double act = double(cfg.micro_batch) * cfg.seq_len * m.hidden * e;
    // Each tensor-parallel rank sends its 1/tp slice: Megatron's scatter-gather (or the
    // sequence-parallel shard), and DeepSpeed's PipelineEngine, which partitions a stage's
    // output and input gradient over the TP group (is_pipe_partitioned and
    // is_grad_partitioned, on whenever the model is tensor-parallel) and all-gathers them
    // back on the other side (PartitionedTensor.full()).
    o.p2p = coll.time(Collective::send_recv, Bytes(act / std::max(1, cfg.tp)), pl.pp_p2p);
    if (cfg.tp > 1 && cfg.framework == Framework::deepspeed)
      o.p2p_gather = coll.time(Collective::all_gather, Bytes(act), pl.tp);
    if (m.tied_embeddings && m.vocab_logits) {
      const double word = double(padded_vocab(m, cfg.tp)) * m.hidden / std::max(1, cfg.tp);
      o.embed_grad_sync = coll.time(Collective::all_reduce, Bytes(word * grad_element_bytes(cfg)), pl.embed);
    }
  }
  return o;
}

}  // namespace dsplan
