// One point of the training-configuration space: framework, precision, optimizer, ZeRO
// stage and offload, parallel degrees, batch shape and memory-saving options. Enums have
// canonical lower-case names (names.h) used on the command line and in JSON.
#pragma once

#include <cstdint>
#include <utility>

#include "core/zero_knobs.h"

namespace dsplan {

enum class Framework : std::uint8_t { deepspeed, megatron, fsdp, ddp };
// The training precision (fp32, or fp16/bf16 mixed). fp8, nvfp4, tf32: GEMM operands only
// (TrainConfig::fp8, ::tf32, ::gemm_precision), never a config's `precision`: `--precision
// fp8|nvfp4` is bf16 with such linears, `--precision tf32` fp32 with TF32 tensor-core matmuls.
enum class Precision : std::uint8_t { fp32, fp16, bf16, fp8, nvfp4, tf32 };
enum class Optimizer : std::uint8_t { adam, sgd, adafactor, adam_8bit };
// none; selective (the attention core, Korthikanti et al.); full (every layer of a stage
// recomputes its forward); block (only the first recompute_layers layers of each stage do,
// Megatron's --recompute-method block; the rest keep their activations).
enum class Checkpointing : std::uint8_t { none, selective, full, block };
// Whole layers rerun their forward in backward (all of them, or block's first n).
inline bool recomputes_layers(Checkpointing c) {
  return c == Checkpointing::full || c == Checkpointing::block;
}
// Megatron-Core's selective-recompute modules (--recompute-modules, TransformerConfig.
// recompute_modules; docs/model.md §3 "Recompute modules"): core_attn (the attention core,
// Korthikanti et al.'s selective recompute), moe_act (the experts' activation), layernorm
// (the norms that are modules of their own: MLA's input norm, an MoE layer's pre-MLP norm),
// mla_up_proj (MLA's up projections and rope), mlp (a dense layer's MLP), moe (the whole MoE
// layer, all-to-alls included) and shared_experts. The output-discarding ones (moe_act,
// layernorm, mla_up_proj) free the module's output once its consumer has saved it; the
// others keep only the module's input.
enum class RecomputeModule : std::uint8_t {
  core_attn,
  moe_act,
  layernorm,
  mla_up_proj,
  mlp,
  moe,
  shared_experts
};
constexpr int kRecomputeModules = 7;
constexpr std::uint8_t module_bit(RecomputeModule m) { return std::uint8_t(1u << unsigned(m)); }
enum class Offload : std::uint8_t { none, optimizer, all };
// The FlashAttention-class kernel a 16-bit run uses (docs/model.md §4.1): auto = what the
// framework picks (Megatron's Transformer Engine prefers cuDNN fused attention on Hopper;
// PyTorch SDPA, i.e. every other framework, FlashAttention-2); fa2; cudnn (cuDNN fused
// attention); fa3 (FlashAttention-3, Hopper only); triton (flash-attn's 2022 Triton kernel,
// llm-foundry's attn_impl triton and Megatron-DeepSpeed's --use-flash-attn-triton).
enum class AttentionKernel : std::uint8_t { auto_, fa2, cudnn, fa3, triton };
// The loss kernel (docs/model.md §4, Head). eager: the framework's own cross-entropy (torch's
// log_softmax + nll_loss on fp32 logits, or Megatron's vocab-parallel one). fused: one kernel over
// the 16-bit logits writing their gradient in place (flash-attn's CrossEntropyLoss(inplace_backward),
// Apex's xentropy, Liger-Kernel's): the loss peak holds only the logits, read once forward, read
// and written once backward. jit_fused: Megatron-Core's --cross-entropy-loss-fusion
// (core/fusions/fused_cross_entropy.py; NeMo's recipes), the eager one's fp32 passes fused three
// ways (cast + max, subtract + exp + sum, divide) and one in backward; Megatron only.
enum class CrossEntropy : std::uint8_t { eager, fused, jit_fused };
// RMSNorm's kernels (docs/model.md §4, "Elementwise"). eager: the chain of PyTorch ops of
// Hugging Face's LlamaRMSNorm (upcast, pow, mean, rsqrt, multiply, cast back, weight), and
// of torch.nn.RMSNorm before PyTorch 2.9. fused: one kernel each way (Transformer Engine,
// Apex, torch.nn.RMSNorm from PyTorch 2.9, pytorch/pytorch#153666). auto_: fused under
// Megatron, eager elsewhere. torch: torch.nn.RMSNorm as PyTorch 2.9-2.14 runs it, one
// kernel each way only where its input has its weight's dtype; otherwise its fallback, the
// op chain in fp32 (upcast, pow, mean, rsqrt, two products, cast back). Under torch
// autocast with fp32 weights that is every norm of a 16-bit input: the query/key norms and
// the post-norms, while the pre-norms read the fp32 residual stream and stay fused
// (dsplan's reference workload; scripts/aten_census.py shows the ops). LayerNorm is one
// kernel in every framework.
enum class NormKernel : std::uint8_t { auto_, eager, fused, torch };
// How FP8 linears scale their tensors (Megatron's --fp8-recipe; docs/model.md §4.1): delayed
// (scales from an amax history, the amax taken inside the cast), tensorwise (per-tensor
// current scaling: each cast first reads its tensor for the amax; Megatron-Bridge's H100 default)
// or mxfp8 (Blackwell's block scaling: an E8M0 scale per 32 elements, row- and column-wise
// copies quantized separately; Megatron-Bridge's Blackwell option). nvfp4 is not an FP8
// recipe but takes the FP8 linears' place (Megatron's --fp4-format e2m1 --fp4-recipe
// nvfp4, Transformer Engine's NVFP4BlockScaling: E2M1 values, an E4M3 scale per 16
// elements and an fp32 scale per tensor; Blackwell only; docs/model.md §4.1, "NVFP4 linears").
enum class Fp8Recipe : std::uint8_t { delayed, tensorwise, mxfp8, nvfp4 };
// Bytes of an NVFP4 element: an E2M1 value (half a byte) and 1/16 of an E4M3 scale.
inline constexpr double kNvfp4Bytes = 0.5 + 1.0 / 16.0;
// Bytes per low-precision linear operand element as stored, gathered or saved: FP8 1, NVFP4 9/16.
inline double linear_operand_bytes(Fp8Recipe r) { return r == Fp8Recipe::nvfp4 ? kNvfp4Bytes : 1.0; }
// Per-tensor FP8 (delayed or current scaling) keeps one FP8 copy of a tensor where the GPU's
// FP8 GEMMs take any operand layout (data-center Blackwell: Transformer Engine's
// nvte_is_non_tn_fp8_gemm_supported, compute capability 10.x), and a transposed second copy
// where they take K-major operands only (Hopper). Block-scaled recipes always keep two.
inline bool fp8_single_copy(bool any_layout_fp8_gemm, Fp8Recipe r) {
  return any_layout_fp8_gemm && (r == Fp8Recipe::delayed || r == Fp8Recipe::tensorwise);
}

struct TrainConfig {
  Framework framework = Framework::deepspeed;
  Precision precision = Precision::bf16;
  Optimizer optimizer = Optimizer::adam;
  int zero_stage = 0;
  Offload offload = Offload::none;
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int vpp = 1;  // virtual pipeline stages per rank (interleaved 1F1B); 1 = plain 1F1B
  // Context parallelism (Megatron-Core's --context-parallel-size): each sequence split over cp
  // ranks with the same parameters, K and V passed around their ring (TE's p2p); GPUs are tp x
  // cp x dp x pp, gradients and the distributed optimizer over dp x cp (time/context_parallel.h).
  int cp = 1;
  // Expert parallelism (Megatron-Core's --expert-model-parallel-size; MoE models only): the
  // routed experts of each layer are split over ep ranks, which exchange tokens all-to-all.
  // Megatron-Core's parallel folding takes the ep ranks from the tp x cp x dp ranks of a
  // stage (expert tensor parallelism 1, which dsplan plans), so ep divides tp x cp x dp and
  // adds no GPUs; the experts' gradients reduce over the tp x cp x dp / ep ranks holding the
  // same experts (expert_dp). docs/model.md §4.11.
  int ep = 1;
  // Expert tensor parallelism (--expert-tensor-parallel-size): each expert's matrices split
  // over etp ranks, which all-gather the tokens the all-to-all brought and reduce-scatter
  // the experts' outputs. The expert grid is etp x ep (etp innermost) out of tp x cp x dp.
  // A run-wide setting (not searched): 1, what dsplan plans, unless a run states otherwise.
  int etp = 1;
  // Megatron's flex token dispatcher with DeepEP (--moe-token-dispatcher-type flex
  // --moe-enable-deepep): a token crosses the network once per node and NVLink once per GPU
  // its experts are on, not once per expert (estimator/time/moe.h). false: the all-to-all
  // dispatcher (NCCL all-to-alls).
  bool moe_deepep = false;
  // Megatron-Core's --moe-permute-fusion (Transformer Engine >= 2.1): the token permutation
  // and its inverse as fused kernels that gather rows and sum a token's copies. false:
  // Megatron-Core's default, PyTorch ops that add rows with atomics (the unpermute's
  // scatter_add forward, the backward of the permute's row gather; estimator/time/moe.h).
  bool moe_permute_fusion = true;
  // Megatron-Core's uneven pipeline split (--account-for-embedding-in-pipeline-split,
  // --account-for-loss-in-pipeline-split; Megatron-LM since 2025-02): the embedding and/or
  // the loss count as one transformer layer each, so a rank holds (layers + e + l) / pp
  // units and the first rank e layers fewer, the last l fewer (stage_layers). It lets a
  // 126-layer Llama 3.1 405B run on 8 or 16 stages. false/false: the even split.
  bool pp_account_embedding = false;
  bool pp_account_loss = false;
  // An explicit uneven split (Megatron's --decoder-first-pipeline-num-layers and
  // --decoder-last-pipeline-num-layers, or a --pipeline-model-parallel-layout whose ends
  // differ): the first and the last virtual stage (chunk) hold these many layers, the other
  // pp x vpp - 2 chunks share the rest evenly. -1: not set (the even or accounted split).
  int pp_first_layers = -1;
  int pp_last_layers = -1;
  bool explicit_split() const { return pp_first_layers >= 0 && pp_last_layers >= 0; }
  // Multi-token prediction (DeepSeek-V3; Megatron's --mtp-num-layers): this many extra
  // transformer layers on the last pipeline stage, each with a projection of the hidden
  // state and the next token's embedding and its own pass through the output head and loss.
  int mtp_layers = 0;
  int micro_batch = 1;
  int grad_accum = 1;
  int seq_len = 1024;
  Checkpointing checkpointing = Checkpointing::none;
  int recompute_layers = 0;  // block: layers per stage that recompute (resolved, >= 1)
  // Megatron's CPU activation offloading (--cpu-offloading-num-layers N, Transformer
  // Engine's offload context): the first N layers copy their saved activations to host
  // memory in the forward and back in the backward. Megatron only, pp 1, no recompute,
  // fewer than the model's layers (docs/model.md §4.5 "Activation offloading").
  int cpu_offload_layers = 0;
  // DeepSpeed's activation checkpointing (deepspeed.checkpointing, Megatron-DeepSpeed's
  // --deepspeed-activation-checkpointing; framework deepspeed, full or block recompute;
  // docs/model.md §4.5 "DeepSpeed's checkpoint options"): partition_activations keeps 1/tp
  // of each recomputed layer's input on each TP rank and all-gathers it before the layer's
  // recompute; cpu_checkpointing copies the kept inputs to host memory in the forward and
  // back before the recompute, both copies on the compute stream.
  bool ds_partition_activations = false;
  bool ds_cpu_checkpointing = false;
  // Whether those options act on this configuration (DeepSpeed, layers recomputed; the
  // partition only with TP and without sequence parallelism, which already splits the input).
  bool ds_partitions_checkpoints() const {
    return ds_partition_activations && framework == Framework::deepspeed &&
           recomputes_layers(checkpointing) && tp > 1 && !sequence_parallel;
  }
  bool ds_checkpoints_on_host() const {
    return ds_cpu_checkpointing && framework == Framework::deepspeed && recomputes_layers(checkpointing);
  }
  // Selective recompute's modules, a set of module_bit(RecomputeModule) (Megatron only);
  // 0 = Megatron's default, the attention core alone. Ignored unless selective.
  std::uint8_t recompute_modules = 0;
  // Whether the selective recompute of this configuration reruns module `r`.
  bool recomputes(RecomputeModule r) const { return recomputes(checkpointing, recompute_modules, r); }
  static bool recomputes(Checkpointing c, std::uint8_t modules, RecomputeModule r) {
    if (c != Checkpointing::selective) return false;
    return ((modules != 0 ? modules : module_bit(RecomputeModule::core_attn)) & module_bit(r)) != 0;
  }
  bool flash_attention = false;
  bool sequence_parallel = false;
  ZeroKnobs zero;
  // Optimizer implementation: 1 fused multi-tensor kernels (DeepSpeed FusedAdam, Apex),
  // 0 a client torch/Hugging Face optimizer looping over tensors (e.g. HF Trainer's AdamW
  // handed to DeepSpeed without an "optimizer" block), -1 the framework's default
  // (fused for DeepSpeed/Megatron; for ddp PyTorch >= 2.0's defaults, the foreach
  // optimizer and zero_grad(set_to_none=True); per-tensor for fsdp). 0 for ddp stands for
  // the PyTorch 1.x loop: a per-tensor optimizer and gradients zeroed in place.
  int fused_optimizer = -1;
  // DDP over a model cast to 16 bits, fp32 master weights in the optimizer (apex AMP opt_level
  // O2, NVIDIA's DeepLearningExamples): no autocast. validate sets it; estimate plans torch.amp.
  bool ddp_amp_o2 = false;
  // DDP or FSDP over a 16-bit model whose gradients and optimizer states are 16-bit too, no fp32
  // master (model.to(bfloat16) with torch.optim, torchtune's dtype bf16, Lightning's bf16-true).
  // ddp_half_model: DDP whose model is itself 16-bit, no autocast (apex O2 or pure 16-bit).
  bool pure16 = false;
  bool pure16_model() const {
    return pure16 && precision != Precision::fp32 &&
           (framework == Framework::ddp || framework == Framework::fsdp);
  }
  bool ddp_half_model() const { return framework == Framework::ddp && (ddp_amp_o2 || pure16_model()); }
  // Which Megatron-LM runs (framework megatron), as YYYYMM of its code; 0 = current. Two
  // defaults changed over time and are priced by release:
  //  - asynchronous TP backward (commit 3f65246, 2021-09-02): the column-parallel input-
  //    gradient all-reduce runs under the weight-gradient GEMM (megatron_async_tp);
  //  - overlapped pipeline sends in interleaved schedules (overlap_p2p_comm, default since
  //    commit 4eeff55, 2023-10-12; megatron_overlap_p2p).
  int megatron_release = 0;
  // Which DeepSpeed runs (framework deepspeed), as YYYYMM of its release's tag; 0 = current:
  // bf16 ZeRO-0's optimizer from 0.17.6 (2025-09, commit 889f0ea; deepspeed_bf16_optimizer),
  // ZeRO-3's blocking fetches before 0.6.0 (2022-03; deepspeed_zero3_sync_fetch).
  int deepspeed_release = 0;
  // Vocabulary-sized metrics the loop evaluates on every micro-batch's logits besides the
  // loss: Composer's llm-foundry train metrics (LanguageCrossEntropy and LanguagePerplexity,
  // use_train_metrics default true), each an fp32 cross-entropy after the backward. 0 for
  // Megatron, DeepSpeed and Hugging Face Trainer loops, which only compute the loss.
  int logit_metrics = 0;
  CrossEntropy cross_entropy = CrossEntropy::eager;  // the loss kernel (enum above)
  NormKernel norm_kernel = NormKernel::auto_;        // RMSNorm's kernels (enum above)
  // The timed step is an fp16 overflow step: the loss scaler finds inf/nan gradients, so
  // the optimizer only checks them and skips its update, and ZeRO skips the all-gather of
  // updated parameters. DeepSpeed before v0.8 started the loss scale at 2^32, so the
  // autotuner's profiled steps 3-5 overflow; validate sets this for those rows.
  bool overflow_step = false;
  // Megatron's gradient buffer (main_grad) and data-parallel reduction in fp32, which --bf16
  // forces (arguments.py). false: the 16-bit buffer of Megatron-Core's grad_reduce_in_fp32=False
  // (NeMo 2's performance recipes) and NeMo 1's grad_sync_dtype bf16. bf16 runs only.
  bool megatron_fp32_grads = true;
  // FSDP hybrid sharding (FSDP1 HYBRID_SHARD, FSDP2's 2-D HSDP mesh): parameters, gradients and
  // optimizer states sharded over one node's data-parallel ranks and replicated across nodes;
  // each micro-batch's gradient shard all-reduced across the replicas. FSDP only.
  bool fsdp_hybrid = false;
  // FSDP's gradient reduction (reduce-scatter, HSDP all-reduce) in fp32: MixedPrecision(Policy)
  // reduce_dtype=float32, torchtitan's (mixed_precision_reduce) and Composer's DEFAULT. false:
  // the compute dtype, PyTorch's own default (reduce_dtype None). 16-bit precisions only.
  bool fsdp_reduce_fp32 = false;
  // Which PyTorch FSDP runs: 1 FullyShardedDataParallel (flat parameters: the all-gather lands
  // in the flat buffer the parameters view, the reduce-scatter reads the flat gradient), 2
  // fully_shard (per-parameter DTensors: each all-gather is copied out into the unsharded
  // parameters, each reduce-scatter input copied in with chunk_cat; torchtitan). FSDP only.
  int fsdp_version = 1;
  AttentionKernel attention = AttentionKernel::auto_;  // the flash-class kernel flash_attention runs
  // FP8 linears (Transformer Engine's delayed-scaling "hybrid" recipe: E4M3 forward, E5M2
  // gradients; Megatron's --fp8-format hybrid): the transformer layers' linear GEMMs run
  // on FP8 tensor cores, everything else at `precision` (bf16 or fp16). Megatron only;
  // needs FP8 tensor cores (Hopper). docs/model.md §4.1, "FP8 linears".
  // With fp8_recipe nvfp4 the same linears run on NVFP4 operands instead (bf16 + NVFP4).
  bool fp8 = false;
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
  bool nvfp4() const { return fp8 && fp8_recipe == Fp8Recipe::nvfp4; }
  // fp32 whose matmuls run on TF32 tensor cores (allow_tf32, the HF Trainer's --tf32, NGC's
  // TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1; off: PyTorch's default): gemm_precision() is tf32.
  bool tf32 = false;
  Precision gemm_precision() const {
    return tf32 && precision == Precision::fp32 ? Precision::tf32 : precision;
  }
  Precision linear_precision() const { return linear_precision(fp8, fp8_recipe, gemm_precision()); }
  static Precision linear_precision(bool fp8, Fp8Recipe r, Precision p) {
    return !fp8 ? p : r == Fp8Recipe::nvfp4 ? Precision::nvfp4 : Precision::fp8;
  }

  std::int64_t global_batch() const {
    return static_cast<std::int64_t>(micro_batch) * grad_accum * dp;
  }
  int gpus() const { return tp * pp * cp * dp; }
  // Ranks that hold the same routed experts (Megatron-Core's expert data-parallel group),
  // on the per-rank view the estimators price (cp_rank_view, whose dp counts the cp ranks;
  // a config with cp 1 is its own view): tp x dp / (ep x etp), at least 1.
  int expert_dp() const {
    const int n = (tp > 0 ? tp : 1) * (dp > 0 ? dp : 1) / ((ep > 0 ? ep : 1) * (etp > 0 ? etp : 1));
    return n > 1 ? n : 1;
  }
  // Transformer layers each pipeline rank holds over all its chunks: the first rank, a
  // middle rank and the last (middle = the larger end with pp <= 2, which has none).
  // Even split: ceil(layers / pp) each (DeepSpeed's uneven partition is priced at its
  // largest stage); accounted split: (layers + e + l) / pp units per rank, less the
  // embedding's on the first and the loss's on the last.
  struct StageLayers {
    int first = 1, middle = 1, last = 1;
    int most() const {
      return first > middle ? (first > last ? first : last) : (middle > last ? middle : last);
    }
  };
  // The explicit split's layers in each virtual stage (chunk) but the first and the last;
  // 0 without an explicit split, a pipeline or middle chunks.
  int middle_chunk_layers(int model_layers) const {
    const int n = (pp > 1 ? pp : 1) * (vpp > 1 ? vpp : 1);
    if (pp <= 1 || !explicit_split() || n <= 2) return 0;
    return (model_layers - pp_first_layers - pp_last_layers) / (n - 2);
  }
  StageLayers stage_layers(int model_layers) const {
    const int p = pp > 1 ? pp : 1;
    if (p > 1 && explicit_split()) {
      const int v = vpp > 1 ? vpp : 1, mid = middle_chunk_layers(model_layers);
      StageLayers s{pp_first_layers + (v - 1) * mid, v * mid, pp_last_layers + (v - 1) * mid};
      if (p == 2) s.middle = s.first > s.last ? s.first : s.last;
      return s;
    }
    if (p == 1 || !(pp_account_embedding || pp_account_loss)) {
      const int k = (model_layers + p - 1) / p;
      return {k, k, k};
    }
    const int k = (model_layers + pp_account_embedding + pp_account_loss) / p;
    StageLayers s{k - pp_account_embedding, k, k - pp_account_loss};
    if (p == 2) s.middle = s.first > s.last ? s.first : s.last;
    return s;
  }
  // Megatron-Core's rule for a split (transformer_config.py): the layers, plus one unit for
  // each of the embedding and the loss that count, divide into pp ranks and each rank's
  // share into vpp chunks. A chunk may then hold the embedding or the loss alone (the
  // Llama 3 paper's 405B layout: 128 units on 16 stages x 8 chunks); dsplan wants a layer on
  // every rank.
  static bool megatron_split_fits(int layers, int pp, int vpp, bool embedding, bool loss) {
    const int units = layers + embedding + loss, n = pp * (vpp > 1 ? vpp : 1);
    if (pp < 1 || units % n != 0) return false;
    return units / pp - ((embedding || loss) ? 1 : 0) >= 1;
  }
  bool megatron_accounted_split() const {
    return framework == Framework::megatron && (megatron_release == 0 || megatron_release >= 202502);
  }
  // Whether the split the flags name can run on these degrees. None: the even split, or
  // DeepSpeed's partitioner, which takes any count (plain 1F1B). Accounted: Megatron
  // releases that have it, or Megatron-DeepSpeed's --pp-partition-method
  // 'type:transformer|embedding', which counts both embeddings (input and tied output)
  // and has no interleaving.
  bool pipeline_split_fits(int layers) const {
    const bool e = pp_account_embedding, l = pp_account_loss;
    if (pp <= 1) return true;
    if (explicit_split()) {  // Megatron's: ends as given, the middle chunks even, a layer a rank
      const int n = pp * (vpp > 1 ? vpp : 1), rest = layers - pp_first_layers - pp_last_layers;
      if (framework != Framework::megatron || rest < 0 || (n == 2 ? rest != 0 : rest % (n - 2) != 0))
        return false;
      const StageLayers s = stage_layers(layers);
      return s.first >= 1 && s.last >= 1 && s.middle >= 1;
    }
    if (!e && !l)
      return megatron_split_fits(layers, pp, vpp, false, false) ||
             (framework == Framework::deepspeed && vpp <= 1);
    if (framework == Framework::deepspeed)
      return e && l && vpp <= 1 && megatron_split_fits(layers, pp, 1, e, l);
    return megatron_accounted_split() && megatron_split_fits(layers, pp, vpp, e, l);
  }
  // Sets the split this run's pipeline uses: even when the layers divide into pp x vpp
  // (DeepSpeed: any count, ceil(layers / pp) priced on every stage), else (Megatron
  // releases that have it) the first accounted split that fits: embedding and loss, the
  // loss alone, the embedding alone. DeepSpeed keeps the accounted split it was asked for
  // (the flags on entry) where it fits. false when no split does.
  bool set_pipeline_split(int layers) {
    if (explicit_split()) return pipeline_split_fits(layers);
    if (framework == Framework::deepspeed && pp > 1 && (pp_account_embedding || pp_account_loss) &&
        pipeline_split_fits(layers))
      return true;
    pp_account_embedding = pp_account_loss = false;
    if (pipeline_split_fits(layers)) return true;
    if (framework != Framework::megatron) return false;
    for (const auto& [e, l] : {std::pair{true, true}, {false, true}, {true, false}}) {
      pp_account_embedding = e;
      pp_account_loss = l;
      if (pipeline_split_fits(layers)) return true;
    }
    pp_account_embedding = pp_account_loss = false;
    return megatron_accounted_split() && set_balanced_split(layers);
  }
  // Megatron's explicit uneven split (--decoder-first/last-pipeline-num-layers) where neither
  // the even nor an accounted split fits: the middle chunks hold ceil(layers / chunks) layers
  // each and the first and the last share the rest, at most as many each, the larger part
  // first (the last chunk also runs the loss). DeepSeek-V3's 61 layers:
  // 3 | 14 x 4 | 2 on 16 stages and 7 | 6 x 8 | 6 on 8, the layouts of NVIDIA's recipes.
  // false when an end would be left without a layer (61 layers on 32 stages), and with
  // interleaving, which Megatron runs on such a split (--num-virtual-stages-per-pipeline-rank)
  // but which would multiply the searched space several-fold: give the split (--pp-first-layers,
  // --pp-last-layers) to plan it interleaved.
  // Each multi-token prediction module counts as one more layer of the last stage's.
  bool set_balanced_split(int layers) {
    const int units = layers + mtp_layers, n = pp, mid = (units + n - 1) / n, rest = units - (n - 2) * mid;
    if (pp < 3 || vpp > 1 || rest / 2 - mtp_layers < 1) return false;
    pp_first_layers = (rest + 1) / 2;
    pp_last_layers = rest / 2 - mtp_layers;
    if (pipeline_split_fits(layers)) return true;
    pp_first_layers = pp_last_layers = -1;
    return false;
  }
  // The per-rank view the estimators price under context parallelism: dp x cp data-parallel
  // ranks (gradients reduce and ZeRO shards over them) and the rank's seq / cp tokens, cp
  // kept for the attention and its K/V ring (estimator/time/context_parallel.h). Itself
  // when cp is 1. A view's gpus() and global_batch() are not the run's.
  TrainConfig cp_rank_view() const {
    if (cp <= 1) return *this;
    TrainConfig v = *this;
    v.dp = (dp > 1 ? dp : 1) * cp;
    v.seq_len = seq_len / cp;
    return v;
  }
  // Ranks one parameter is sharded over: dp, or with FSDP hybrid sharding the data-parallel
  // ranks of one node.
  int shard_degree(int gpus_per_node) const {
    if (!(framework == Framework::fsdp && fsdp_hybrid)) return dp;
    const int per_node = gpus_per_node / (tp > 0 ? tp : 1);
    return per_node < 1 ? 1 : (per_node < dp ? per_node : dp);
  }
  // DeepSpeed in bf16 without ZeRO wraps the optimizer in BF16_Optimizer (the engine's
  // _do_optimizer_sanity_check: bf16 without ZeRO accumulates gradients in fp32;
  // deepspeed/runtime/bf16_optimizer.py, since 0.6.x): a full fp32 gradient buffer, the
  // fp32 master weights and optimizer states partitioned over the data-parallel ranks as
  // in ZeRO stage 1, an all-reduce of the fp32 gradients, and an all-gather of the bf16
  // parameters after the step. BLOOM-176B trained this way.
  // Megatron-Core overlaps its data-parallel reduction with the backward (bucketed) and,
  // with the distributed optimizer, the parameter all-gather with the next forward.
  bool megatron_overlap() const { return framework == Framework::megatron && zero.overlap_comm == 1; }
  // Megatron-FSDP (--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params):
  // Megatron at stage 3 shards parameters, gradients and optimizer state, gathers each layer
  // ahead of its forward and backward and reduce-scatters its gradients, always overlapped.
  bool megatron_fsdp() const { return framework == Framework::megatron && zero_stage == 3; }
  // FP8 linears with Megatron's distributed optimizer keep the layers' weights in FP8 and
  // all-gather them in FP8 (--fp8-param-gather, from 2024-09; NeMo's fp8_params; what dsplan
  // emits); NVFP4 linears likewise in NVFP4 (--fp4-param-gather, Megatron-Bridge's default).
  bool fp8_param_gather() const {
    return fp8 && framework == Framework::megatron && zero_stage >= 1 &&
           !(megatron_release && megatron_release < 202409);
  }
  // Megatron-LM fused its attention scale, mask and softmax, its bias + GELU and its bias +
  // dropout + residual add in commit 51a2e6b ("Various speed optimizations", 2020-09-11).
  // Before it (the 2019 code, v1.0) each is its own PyTorch op (docs/model.md §4).
  bool megatron_unfused_elementwise() const {
    return framework == Framework::megatron && megatron_release != 0 && megatron_release < 202009;
  }
  bool megatron_async_tp() const {
    return framework == Framework::megatron && (megatron_release == 0 || megatron_release >= 202109);
  }
  bool megatron_overlap_p2p() const {
    return framework == Framework::megatron && vpp > 1 && (megatron_release == 0 || megatron_release >= 202310);
  }
  // The model code is Megatron's, whose layers fuse Q, K, V and gate, up whatever the model
  // says (ModelSpec::fused_qkv): Megatron, and DeepSpeed with tensor parallelism, which only
  // Megatron-DeepSpeed provides here. Other DeepSpeed, FSDP and DDP plans run the model's
  // own code (Hugging Face's, torchtitan's).
  static bool megatron_layers(Framework f, int tp) {
    return f == Framework::megatron || (f == Framework::deepspeed && tp > 1);
  }
  bool megatron_layers() const { return megatron_layers(framework, tp); }
  // The pre-norms run one kernel each way (norm_kernel resolved: auto is fused under Megatron).
  static bool rmsnorm_fused(NormKernel k, Framework f) {
    return k == NormKernel::fused || k == NormKernel::torch ||
           (k == NormKernel::auto_ && f == Framework::megatron);
  }
  bool rmsnorm_fused() const { return rmsnorm_fused(norm_kernel, framework); }
  // torch.amp over fp32 weights: DDP's 16-bit training unless its model is 16-bit (the others
  // cast the weights themselves: DeepSpeed's and Megatron's 16-bit modules, FSDP's param_dtype).
  static bool torch_autocast(Framework f, Precision p, bool half_model = false) {
    return f == Framework::ddp && p != Precision::fp32 && !half_model;
  }
  bool torch_autocast() const { return torch_autocast(framework, precision, ddp_half_model()); }
  // Norms of 16-bit inputs (q/k norms, post-norms): as the pre-norms, bar RMSNorm's autocast fallback.
  static bool rmsnorm16_fused(NormKernel k, Framework f, Precision p, bool half_model = false) {
    return rmsnorm_fused(k, f) && !(k == NormKernel::torch && torch_autocast(f, p, half_model));
  }
  bool rmsnorm16_fused() const {
    return rmsnorm16_fused(norm_kernel, framework, precision, ddp_half_model());
  }
  // bf16 ZeRO-0 runs BF16_Optimizer (above) before DeepSpeed 0.17.6 and in a pipeline; else engine.py's
  // DDP_BFLOAT16 wraps it in FP16_Optimizer (replicated fp32 master and states): as fp16 ZeRO-0.
  bool deepspeed_bf16_optimizer() const {
    return framework == Framework::deepspeed && precision == Precision::bf16 && zero_stage == 0 &&
           (pp > 1 || (deepspeed_release != 0 && deepspeed_release < 202509));
  }
  // DeepSpeed ZeRO-0's FP16_Optimizer wrapper: fp16, and bf16 outside BF16_Optimizer's cases.
  bool deepspeed_fp16_optimizer() const {
    return framework == Framework::deepspeed && zero_stage == 0 && precision != Precision::fp32 &&
           !deepspeed_bf16_optimizer();
  }
  // ZeRO-3 before 0.6.0: each submodule fetch blocks (v0.5.x stage3.py fetch_sub_module).
  bool deepspeed_zero3_sync_fetch() const {
    return framework == Framework::deepspeed && zero_stage == 3 && deepspeed_release &&
           deepspeed_release < 202203;
  }
  // DDP on PyTorch >= 2.0's defaults (fused_optimizer -1): foreach optimizer, grads freed each step.
  bool ddp_pytorch2_defaults() const { return framework == Framework::ddp && fused_optimizer < 0; }
  // DDP at ZeRO 1: torch's ZeroRedundancyOptimizer (states and step sharded by whole parameters).
  bool ddp_zero_redundancy() const { return framework == Framework::ddp && zero_stage == 1; }
  // Layers of a stage of `stage_layers` that rerun their forward in backward.
  int recomputed_layers(int stage_layers) const {
    if (checkpointing == Checkpointing::full) return stage_layers;
    if (checkpointing == Checkpointing::block)
      return recompute_layers < stage_layers ? recompute_layers : stage_layers;
    return 0;
  }
  // Share of a layer's recompute cost each layer carries: n/L for block, 1 otherwise.
  double recompute_share(int stage_layers) const {
    if (checkpointing != Checkpointing::block || stage_layers < 1) return 1.0;
    return static_cast<double>(recomputed_layers(stage_layers)) / stage_layers;
  }
  bool operator==(const TrainConfig&) const = default;
};

}  // namespace dsplan
