// The flags of `dsplan estimate` (and `confirm`, which shares them): names, help text and
// the range checks CLI11 applies while reading them. What they mean together is checked
// in estimate_options.cc (prepare_estimate), which reports every bad flag at once.
#include "cli/commands.h"
#include "cli/estimate_options.h"
#include "estimator/search/space.h"
#include "hwdb/hwdb.h"

namespace dsplan::cli {

void add_estimate_options(CLI::App* sub, EstimateOptions& o) {
  sub->add_option("--model", o.model, "Model preset name, dsplan model JSON or Hugging Face config.json")
      ->required();
  sub->add_option("--gpus", o.gpus, "Total number of GPUs")
      ->required()
      ->check(number_check(true, 1, kMaxGpus, "an integer in [1, " + std::to_string(kMaxGpus) + "]"));
  sub->add_option("--hw", o.hw, "GPU or system preset, or cluster JSON (default dgx-a100)");
  sub->add_option("--gpus-per-node", o.gpus_per_node, "GPUs per node (overrides the preset)")
      ->check(number_check(true, 1, kMaxGpusPerNode,
                           "an integer in [1, " + std::to_string(kMaxGpusPerNode) + "]"));
  sub->add_option("--inter-node-gbps", o.inter_node_gbps, "Network bandwidth per node, Gbit/s")
      ->check(number_check(false, kMinInterNodeGbps, kMaxInterNodeGbps,
                           "Gbit/s per node in [0.01, 1000000], e.g. 1600"));
  sub->add_option("--framework", o.framework,
                  "deepspeed (default; megatron for a mixture-of-experts model), megatron, fsdp or ddp");
  sub->add_option(
      "--precision", o.precision,
      "fp32, fp16 or bf16 (default bf16 where supported, else fp16); fp8: bf16 with Transformer "
      "Engine FP8 linears (Megatron, Hopper or Blackwell); nvfp4: bf16 with NVFP4 linears "
      "(Megatron, Blackwell); tf32: fp32 with TF32 tensor-core matmuls (Ampere or newer; fp32 "
      "is PyTorch's default, IEEE fp32 matmuls); bf16-pure: a bf16 model, gradients and optimizer "
      "states without fp32 master weights (model.to(bfloat16); --framework ddp or fsdp)");
  sub->add_option("--optimizer", o.optimizer, "adam (default), sgd, adafactor or adam-8bit");
  sub->add_option("--seq", o.seq,
                  "Sequence length (default: the context the model was pre-trained at, pretrain_seq, else "
                  "its maximum context)")
      ->check(number_check(true, 0, 1 << 24, "tokens, an integer in [1, 16777216]; 0 = the default"));
  sub->add_option("--global-batch", o.global_batch, "Fixed global batch (samples); gas is derived")
      ->check(number_check(true, 1, kMaxGlobalBatch, "a positive integer number of samples"));
  sub->add_option("--zero", o.zero, "ZeRO stages to search, e.g. 0,1,2,3");
  sub->add_option("--tp", o.tp, "Tensor-parallel degrees, e.g. 1,2,4,8");
  sub->add_option("--pp", o.pp, "Pipeline-parallel degrees");
  sub->add_option("--vpp", o.vpp, "Virtual pipeline stages per rank (interleaving)");
  sub->add_option("--mbs", o.mbs, "Micro-batch sizes, a list or a range like 1-64");
  sub->add_option("--gas", o.gas, "Gradient-accumulation steps (without --global-batch)");
  sub->add_option("--ckpt", o.ckpt, "Activation checkpointing: none, selective, full, block");
  sub->add_option("--recompute-layers", o.recompute_layers,
                  "Block checkpointing: layers per pipeline stage that recompute (default half)")
      ->check(number_check(true, 1, 1 << 20, "a positive number of layers"));
  sub->add_option("--cpu-offload-layers", o.cpu_offload_layers,
                  "Megatron's CPU activation offloading (--cpu-offloading-num-layers): the first N layers "
                  "copy their saved activations to host memory and back (pp 1, no recompute; default 0)")
      ->check(number_check(true, 0, 1 << 20, "a number of layers, 0 or more"));
  sub->add_option(
      "--partition-activations", o.partition_activations,
      "DeepSpeed's activation checkpointing (deepspeed framework, full or block --ckpt): on keeps "
      "1/TP of each recomputed layer's input on each TP rank and all-gathers it before the "
      "recompute (ds_config partition_activations, Megatron-DeepSpeed's --partition-activations); "
      "default off");
  sub->add_option(
      "--cpu-checkpointing", o.cpu_checkpointing,
      "DeepSpeed's activation checkpointing (deepspeed framework, full or block --ckpt): on keeps the "
      "recomputed layers' inputs in host memory, copied down in the forward and up before the "
      "recompute, blocking (ds_config cpu_checkpointing, Megatron-DeepSpeed's --checkpoint-in-cpu); "
      "default off");
  sub->add_option(
      "--recompute-modules", o.recompute_modules,
      "Megatron-Core's selective recompute modules (implies --ckpt selective): core_attn "
      "(the default), moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts; comma-separated");
  sub->add_option("--flash", o.flash, "FlashAttention: on, off");
  sub->add_option(
      "--attention", o.attention,
      "Attention kernel when flash is on: auto (Megatron on Hopper: cuDNN via Transformer Engine; "
      "otherwise FlashAttention-2), fa2, cudnn, fa3 (Hopper only), triton (flash-attn's Triton kernel)");
  sub->add_option("--sp", o.sp, "Sequence parallelism: on, off");
  sub->add_option("--offload", o.offload, "CPU offload: none, optimizer, all");
  sub->add_option("--metric", o.metric, "Ranking metric: throughput (default), latency, flops");
  sub->add_option("--top", o.top, "How many configurations to show (default 10)")
      ->check(number_check(true, 1, 1e9, "a positive integer"));
  sub->add_flag("--all", o.all, "Also show configurations that do not fit, with reasons");
  sub->add_option("--simulate-top", o.simulate_top, "Finalists re-ranked by the step simulator (default 100)")
      ->check(number_check(true, 0, 1e9, "a non-negative integer"));
  sub->add_option("--profile", o.profile, "Calibration profile from 'dsplan calibrate'");
  sub->add_option("--residual", o.residual, "Residual model learned by 'dsplan confirm'");
  sub->add_option("--cuda-context-gib", o.cuda_context_gib,
                  "CUDA context per GPU, GiB (default 0.5: CUDA >= 11.7 lazy loading; "
                  "~1.25 eager, CUDA < 11.7)")
      ->check(number_check(false, 1e-3, 16,
                           "a number of GiB > 0 and < 16 (0.5 with CUDA >= 11.7 lazy loading, ~1.25 eager)"));
  sub->add_option("--overlap-comm", o.overlap_comm,
                  "Overlap gradient reduction with backward: default (DeepSpeed: stage 3 only; Megatron: "
                  "after backward), on (DeepSpeed overlap_comm; Megatron-Core --overlap-grad-reduce and "
                  "--overlap-param-gather), off");
  sub->add_option("--fsdp-sharding", o.fsdp_sharding,
                  "FSDP: full (shard over every data-parallel rank) or hybrid (HYBRID_SHARD / HSDP: shard "
                  "within a node, replicate across nodes)");
  sub->add_option("--fsdp-version", o.fsdp_version,
                  "FSDP: 1 (default; FullyShardedDataParallel, flat parameters) or 2 (fully_shard, "
                  "per-parameter sharding as torchtitan runs it: each all-gather is copied out into the "
                  "parameters and each reduce-scatter input copied in)");
  sub->add_option("--cp", o.cp,
                  "Context-parallel degrees to search, e.g. 1,2,4 (default 1; Megatron-Core's "
                  "--context-parallel-size with Transformer Engine's ring attention; --framework megatron, "
                  "flash on)");
  sub->add_option("--ep", o.ep,
                  "Expert-parallel degrees to search for a mixture-of-experts model, e.g. 1,8 (default: the "
                  "powers of two that divide the experts and the GPUs; Megatron-Core's "
                  "--expert-model-parallel-size, taken from tp x cp x dp)");
  sub->add_option("--etp", o.etp,
                  "Expert tensor parallelism of a mixture-of-experts model (default 1, what Megatron-Core's "
                  "performance recipes run; Megatron-Core's own default is the TP degree): each expert's "
                  "matrices split over etp ranks, which gather their tokens and reduce-scatter the outputs")
      ->check(number_check(true, 1, 64, "an integer in [1, 64]"));
  sub->add_option("--moe-dispatcher", o.moe_dispatcher,
                  "Token dispatch of a mixture-of-experts model: alltoall (default; NCCL all-to-alls, a copy "
                  "per expert) or deepep (Megatron's flex dispatcher with DeepEP: a copy per node and GPU)");
  sub->add_option(
      "--moe-permute-fusion", o.moe_permute_fusion,
      "Token permutation of a mixture-of-experts model: on (default; Transformer Engine's fused "
      "kernels, Megatron-Core's --moe-permute-fusion) or off (Megatron-Core's default PyTorch ops, "
      "which add rows with atomics)");
  sub->add_option("--mtp", o.mtp,
                  "Multi-token prediction modules to train (DeepSeek-V3's; Megatron-Core's --mtp-num-layers; "
                  "default 0): each one more transformer layer, a projection and a pass through the output "
                  "head and loss on the last pipeline stage")
      ->check(number_check(true, 0, 16, "an integer in [0, 16]"));
  sub->add_option(
         "--pp-first-layers", o.pp_first_layers,
         "Megatron's explicit pipeline split (--decoder-first-pipeline-num-layers; with "
         "--pp-last-layers): the layers of the first (virtual) stage, the middle ones even; pins pp > 1. "
         "Default: the even split, else the loss and embedding counted as layers, else the most balanced "
         "explicit split")
      ->check(number_check(true, 0, 1 << 16, "a layer count, an integer >= 0"));
  sub->add_option(
         "--pp-last-layers", o.pp_last_layers,
         "The layers of the last (virtual) stage of an explicit split (--decoder-last-pipeline-num-layers; "
         "with --pp-first-layers)")
      ->check(number_check(true, 0, 1 << 16, "a layer count, an integer >= 0"));
  sub->add_option(
         "--logit-metrics", o.logit_metrics,
         "Training metrics the loop computes on each micro-batch's logits besides the loss "
         "(default 0; Composer with llm-foundry models: 2, LanguageCrossEntropy and LanguagePerplexity)")
      ->check(number_check(true, 0, 16, "an integer in [0, 16]"));
  sub->add_option("--cross-entropy", o.cross_entropy,
                  "The loss kernel: eager (default; the framework's cross-entropy, torch's on fp32 "
                  "logits), fused (one kernel over the 16-bit logits writing their gradient in place: "
                  "flash-attn's CrossEntropyLoss(inplace_backward=True), Apex xentropy, Liger-Kernel) or "
                  "jit-fused (megatron only: Megatron-Core's --cross-entropy-loss-fusion, NeMo's default)");
  sub->add_option("--norm-kernel", o.norm_kernel,
                  "RMSNorm's kernels: auto (default; fused under Megatron, eager elsewhere), eager (the "
                  "PyTorch op chain of Hugging Face's LlamaRMSNorm), fused (one kernel each way: "
                  "Transformer Engine, Apex, Liger-Kernel) or torch (torch.nn.RMSNorm on PyTorch "
                  "2.9-2.14: fused where its input has its weight's dtype; under torch.amp the "
                  "query/key and post-norms of 16-bit inputs run its fp32 op chain)");
  sub->add_option("--fp8-recipe", o.fp8_recipe,
                  "FP8 scaling with --precision fp8: delayed (default; Transformer Engine's amax history), "
                  "tensorwise (per-tensor current scaling: an amax pass before every cast) or mxfp8 "
                  "(Blackwell only: an E8M0 scale per 32 elements, Megatron-Bridge's MXFP8); nvfp4 is "
                  "--precision nvfp4");
  sub->add_option(
      "--grad-reduce-in-fp32", o.grad_reduce_in_fp32,
      "Gradient reduction in fp32 or 16 bits (default, on, off). Megatron: fp32 gradient buffer and "
      "data-parallel reduction (default on, Megatron-LM's bf16 rule; off: Megatron-Core "
      "grad_reduce_in_fp32=False, as NeMo's performance recipes set). FSDP: reduce_dtype float32 (on: "
      "torchtitan's and Composer's default) or the compute dtype (default off, PyTorch's)");
  sub->add_option("--fragmentation", o.fragmentation,
                  "Caching-allocator slack as a fraction of allocated memory (default 0.10; lower with "
                  "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)")
      ->check(number_check(false, 0, 1, "a fraction in [0, 1], e.g. 0.10"));
  sub->add_option(
      "--train-tokens", o.train_tokens,
      "Tokens to train on, e.g. 300B, 1.5T or 3e11: each configuration's steps, days and GPU-hours "
      "for them");
  // An empty value ("--mbs ''", often an unset shell variable) would silently mean "search
  // everything" or "the default": refuse it, repeating what the flag takes.
  for (CLI::Option* opt : sub->get_options()) {
    if (opt->get_type_name() != "TEXT") continue;
    const std::string takes = opt->get_description();
    opt->check(CLI::Validator(
        [takes](std::string& text) {
          return text.empty() ? "an empty value (" + takes + ")" : std::string();
        },
        "", "dsplan-non-empty"));
  }
}

}  // namespace dsplan::cli
