// The assumptions `dsplan estimate` states about the run settings it searched (kernels,
// FSDP and Megatron variants, the loss, sliding windows): one line each, printed above
// the ranking and written into --json. Wording only; the model applies the settings.
#include <algorithm>
#include <cstdio>

#include "cli/commands.h"
#include "cli/estimate_options.h"
#include "core/names.h"
#include "estimator/search/space.h"
#include "estimator/time/alignment.h"
#include "estimator/time/efficiency_defaults.h"

namespace dsplan::cli {

void low_precision_assumptions(const TrainConfig& run, std::vector<std::string>& out) {
  if (run.gemm_precision() == Precision::tf32)
    out.push_back(
        "tf32: fp32 weights, gradients, optimizer and activations, every matmul on TF32 tensor cores "
        "(torch.backends.cuda.matmul.allow_tf32, or TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 as NGC containers "
        "set; PyTorch's own default since 1.12 is IEEE fp32, --precision fp32) at 0.95 of the 16-bit "
        "kernels' share of the TF32 peak (dsplan's H100 and H200 GEMM fits); MFU against that peak");
  if (run.pure16_model())
    out.push_back(
        "bf16-pure: the model cast to bf16 (model.to(torch.bfloat16)), its gradients and the optimizer "
        "states in bf16, no fp32 master weights, no autocast: 8 B/param of states with Adam");
  if (!run.fp8) return;
  if (run.nvfp4()) {
    out.push_back(
        "nvfp4: Transformer Engine's NVFP4 recipe (E2M1 with an E4M3 scale per 16 elements and an fp32 "
        "scale per tensor; 16x16 weight blocks, a random Hadamard transform on the weight-gradient "
        "operands) on every transformer layer's linears, GEMMs at FP8's share of the FP4 peak (no NVFP4 "
        "GEMM measured: docs/model.md section 4.1 \"NVFP4 linears\"); attention, logits and the rest in "
        "bf16; weights gathered in NVFP4 with the distributed optimizer, else quantized once per step");
    return;
  }
  const bool mx = run.fp8_recipe == Fp8Recipe::mxfp8;
  out.push_back(
      std::string(mx ? "fp8: Transformer Engine's MXFP8 recipe (E4M3 with an E8M0 scale per 32 elements) "
                     : "fp8: Transformer Engine's hybrid recipe (E4M3 forward, E5M2 gradients) ") +
      "on the transformer layers' linears, " +
      (run.fp8_recipe == Fp8Recipe::tensorwise ? "per-tensor current scaling"
       : mx ? "row- and column-wise copies quantized separately, block-scaled GEMMs at the FP8 peak "
              "(Megatron-Bridge's MXFP8 runs measured 2-7% slower than current scaling on the same "
              "layouts, where this price is 2% faster: docs/accuracy.md \"Session 46\")"
            : "delayed scaling") +
      "; attention, logits and the rest in bf16; FP8 weights gathered in FP8 with the distributed "
      "optimizer, else cast once per step");
}

std::vector<std::string> run_assumptions(const SearchSpace& s, const ModelSpec& model, const Cluster& cluster,
                                         const SystemSpec& system) {
  std::vector<std::string> out;
  const GpuSpec& gpu = system.gpu;
  const SearchSpace searched = with_defaults(s, model, cluster);
  if (std::any_of(searched.cp.begin(), searched.cp.end(), [](int cp) { return cp > 1; })) {
    std::string list;
    for (int cp : searched.cp) list += (list.empty() ? "" : ", ") + std::to_string(cp);
    out.push_back("context parallelism " + list +
                  " (Megatron-Core, Transformer Engine's p2p ring): each GPU holds 1/cp of every sequence, "
                  "with flash attention" +
                  (s.cp.empty() ? "; searched by default from 8,192 tokens, --cp 1 leaves it out" : ""));
  } else if (s.run.framework != Framework::megatron && s.run.seq_len >= 8192) {
    out.push_back("sequence of " + std::to_string(s.run.seq_len) +
                  " tokens: context parallelism is modelled for Megatron-Core only (--framework megatron "
                  "searches it); DeepSpeed-Ulysses and PyTorch's context_parallel are not modelled");
  }
  // CPU offload, when asked for: what the host step rests on, and how to give the real host.
  if (std::any_of(s.offload.begin(), s.offload.end(), [](Offload o) { return o != Offload::none; })) {
    const Efficiency e = default_efficiency(gpu);
    char rates[160];
    std::snprintf(
        rates, sizeof rates,
        "%.2f x %.0f GB/s of DRAM bandwidth shared by its %d GPU%s, copies at %.2f x %.1f GB/s over "
        "each GPU's host link",
        e.host_mem_fraction, in_GBps(system.host_mem_bw), system.gpus_per_node,
        system.gpus_per_node == 1 ? "" : "s", e.pcie_fraction, in_GBps(gpu.pcie_bw));
    out.push_back("CPU offload: the host's optimizer step (DeepSpeed's CPU Adam and its passes) at " +
                  system.name + "'s " + rates +
                  ", as published offload runs took it (docs/model.md §4.5 \"Optimizer and offload\"); the "
                  "host's CPU and memory decide it: give your host's host_mem_GBps in a cluster JSON (--hw)");
  }
  const bool any_flash = s.flash.empty() || std::find(s.flash.begin(), s.flash.end(), true) != s.flash.end();
  if (s.run.attention != AttentionKernel::auto_)
    out.push_back(std::string("attention kernel ") + name(s.run.attention) +
                  " where FlashAttention is on (--attention)");
  else if (system.gpu.arch == GpuArch::hopper && s.run.precision != Precision::fp32 && any_flash)
    out.push_back(s.run.framework == Framework::megatron
                      ? "flash attention on Hopper: Transformer Engine's cuDNN fused attention (1.6x FA2)"
                      : "flash attention on Hopper: FlashAttention-2 (PyTorch SDPA or the flash-attn "
                        "package); give --attention "
                        "cudnn or fa3 if the run uses those");
  else if (system.gpu.arch == GpuArch::blackwell && s.run.precision != Precision::fp32 && any_flash)
    out.push_back(
        s.run.framework == Framework::megatron
            ? "flash attention on Blackwell: Transformer Engine's cuDNN fused attention, at its "
              "Hopper share of the GEMM rate (no Blackwell kernel measured)"
            : "flash attention on Blackwell: FlashAttention-2 (PyTorch SDPA) at its Hopper share of "
              "the GEMM rate (no Blackwell kernel measured); give --attention cudnn if the run uses it");
  if (system.gpu.arch == GpuArch::blackwell)
    out.push_back(
        system.gpu.name +
        ": datasheet peaks with Hopper's kernel efficiencies (cuBLAS share of peak, "
        "memory-bound kernel rates); no Blackwell kernel measured, held-out error in docs/accuracy.md");
  for (const std::string& advice : alignment_advice(model, searched.tp, s.run.precision, gpu))
    out.push_back(advice);
  if (s.run.fsdp_hybrid)
    out.push_back(
        "FSDP hybrid sharding: states sharded over each node's data-parallel ranks, "
        "gradient shards all-reduced across nodes every micro-batch");
  if (s.run.fsdp_version == 2)
    out.push_back(
        "FSDP2 (fully_shard): each layer's all-gather is copied out into its parameters "
        "(in forward, and again in backward at ZeRO 3) and each reduce-scatter input is "
        "copied in, on the compute stream");
  if (s.run.fsdp_reduce_fp32 && s.run.framework == Framework::fsdp)
    out.push_back(
        "FSDP gradients reduced in fp32 (reduce_dtype float32): twice the reduce-scatter "
        "bytes of 16-bit gradients, and a cast of every layer's gradients before it");
  if (!s.run.megatron_fp32_grads)
    out.push_back(
        "Megatron gradients accumulated and reduced in 16 bits (grad_reduce_in_fp32=False); "
        "Megatron-LM's own arguments force fp32 with --bf16, so set it in Megatron-Core's "
        "DistributedDataParallelConfig or NeMo's trainer plugin");
  if (s.run.cross_entropy == CrossEntropy::fused)
    out.push_back(
        "fused cross-entropy: the loss keeps only the 16-bit logits and overwrites "
        "them with their gradient");
  if (s.run.cross_entropy == CrossEntropy::jit_fused)
    out.push_back(
        "Megatron-Core's jit-fused cross-entropy (--cross-entropy-loss-fusion): the fp32 "
        "passes over the logits fused three ways forward and one backward");
  if (model.norm == NormKind::rmsnorm) {
    const bool amp = s.run.torch_autocast();
    const bool norms16 = model.qk_norm || model.norms_per_layer == 4;
    if (!TrainConfig::rmsnorm_fused(s.run.norm_kernel, s.run.framework))
      out.push_back(
          "RMSNorm as eager PyTorch ops (Hugging Face's LlamaRMSNorm: 4-6 kernels forward, 12-14 "
          "backward); give --norm-kernel torch for torch.nn.RMSNorm on PyTorch >= 2.9, fused "
          "for Liger-Kernel or Apex");
    else if (s.run.norm_kernel == NormKernel::torch && amp && norms16)
      out.push_back(
          "torch.nn.RMSNorm (--norm-kernel torch): the pre-norms in one kernel each way; the "
          "query/key and post-norms, whose 16-bit inputs meet fp32 weights under torch.amp, as "
          "its fallback chain of fp32 ops (PyTorch 2.9-2.14)");
    else if (s.run.norm_kernel == NormKernel::fused && amp && norms16)
      out.push_back(
          "RMSNorm in one kernel each way for every norm (--norm-kernel fused: Liger-Kernel, "
          "Apex); torch.nn.RMSNorm runs its fp32 fallback on the query/key and post-norms under "
          "torch.amp, which --norm-kernel torch prices");
    else if (s.run.framework != Framework::megatron)
      out.push_back("RMSNorm in one kernel each way (--norm-kernel " + std::string(name(s.run.norm_kernel)) +
                    ")");
  }
  if (s.run.logit_metrics > 0)
    out.push_back(std::to_string(s.run.logit_metrics) +
                  " training metric(s) over the logits per micro-batch "
                  "(an fp32 cross-entropy each, after the backward)");
  // Only where the window is shorter than the sequence: otherwise it changes nothing.
  if (windowed_layers_of(model) > 0 && model.attention_window < s.run.seq_len && any_flash)
    out.push_back(
        window_phrase(model) +
        ": flash configurations skip the key blocks outside it, as flash-attn's window_size, "
        "Transformer Engine and FlexAttention do (PyTorch SDPA with a window mask computes them all)");
  if (model.attention_sinks && any_flash)
    out.push_back(std::string("attention sinks (a learned logit per head): ") +
                  (sinks_trainable(s.run)
                       ? "flash configurations run Transformer Engine's cuDNN attention, which trains them"
                       : "standard attention only (the sink concatenated to the scores): FlashAttention "
                         "has no backward for them, Transformer Engine's cuDNN attention "
                         "(--attention auto or cudnn) has"));
  return out;
}

}  // namespace dsplan::cli
