// Regimes of predicted configurations and the accuracy their published and real runs showed
// (estimator/search/evidence.h). The table below is the output of `dsplan validate
// --evidence` over the development rows (../shared/validation/published.json) and the
// repository's held-out, evidence and real-run files; ctest `cli.validate_evidence_bands`
// recomputes it and fails when a band drifts from the model's predictions.
#include "estimator/search/evidence.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/names.h"

namespace dsplan {

namespace {

// A host that issues kernels four times slower than the priced rate would set the step
// (the lent H100 and H200 VMs issued one every 25-40 us, against the default 10).
constexpr double kHostSensitiveShare = 0.25;

// The q-quantile of sorted values, linear between ranks (q = 0.5: the median).
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const std::size_t i = static_cast<std::size_t>(pos);
  const double f = pos - static_cast<double>(i);
  return i + 1 < sorted.size() ? sorted[i] + f * (sorted[i + 1] - sorted[i]) : sorted[i];
}

// clang-format off
// regime, runs, median |measured / predicted step - 1|, lowest and highest ratio, 10th and
// 90th percentiles, sources.
constexpr std::array<EvidenceBand, 36> kBands{{
    {"ampere ddp", 40, 0.071, 0.75, 1.22, 0.80, 1.08,
     "held out: flash-attn's GPT-3 125M-2.7B on 8 A100 80GB, the FlashAttention-2 paper's 1.3B and 2.7B at 2k "
     "and 8k tokens, NVIDIA's BERT-large pre-training on 1 and 8 A100 in TF32 and apex AMP O2 "
     "(DeepLearningExamples), and FlagPerf's BERT-large, GPT-2 medium, DistilBERT (TF32), MLPerf BERT (apex O2) "
     "and CPM-1 medium on 1-16 A100 40GB (the TF32 runs 4-25% faster than predicted)"},
    {"ampere deepspeed", 12, 0.114, 0.71, 1.50, 0.79, 1.42,
     "held out: Azure's ZeRO-3 175B, BigScience's 20B, Megatron-DeepSpeed's long-sequence GPT 30B at TP 32 "
     "(2K-8K) and BERT 1.3B on 64 A100, Hugging Face's Granite 7B ZeRO-3, the ZenFlow blog's Qwen2.5 1.5B "
     "ZeRO-2 on A100, FlagPerf's Llama-2-7B through Megatron-DeepSpeed on 8 A800/A100"},
    {"ampere deepspeed host-sensitive", 3, 0.009, 1.00, 1.02, 1.00, 1.02,
     "held out: FlagPerf's Llama-2-7B ZeRO-3 on 8 A800 (DeepSpeed 0.11.1: ZeRO-3's submodule hooks as host time)"},
    {"ampere deepspeed long-sequence", 5, 0.206, 0.98, 1.77, 1.02, 1.56,
     "held out: Megatron-DeepSpeed's long-sequence GPT 30B at TP 32 on 32 A100, 16K-256K tokens (flash-attn's "
     "Triton kernel; faster than predicted at 16K, slower beyond)"},
    {"ampere deepspeed offload", 11, 0.254, 1.07, 2.51, 1.07, 1.81,
     "held out: Azure's ZeRO-3 Offload 1T and 2T on 1024 A100, OPT-Benchmark's OPT 13B and 30B ZeRO-3 "
     "Offload on 1 and 8 A100, the ZenFlow blog's Qwen2.5 ZeRO-Offload on 2 A100, Colossal-AI's Lightning "
     "benchmark 18B on one A100 (ZeRO-3 Offload)"},
    {"ampere deepspeed pipeline", 64, 0.078, 0.92, 2.56, 0.99, 1.24,
     "BigScience topology runs, GPT-NeoX-20B, BLOOM-176B, MT-NLG 530B, Megatron-DeepSpeed's GPT-3 125M at TP 2 "
     "PP 2 (1.6-2.6x: a toy model's per-micro-batch costs) (held out); BigScience head-count runs (development "
     "evidence)"},
    {"ampere fsdp", 33, 0.024, 0.91, 1.18, 0.92, 1.03,
     "held out: llm-foundry MPT, torchtitan and IBM FMS Llama runs on A100"},
    {"ampere fsdp long-sequence", 4, 0.035, 0.98, 1.06, 0.98, 1.05,
     "held out: llm-foundry MPT at 16K-64K tokens on 8 A100 (Triton attention)"},
    {"ampere megatron", 15, 0.014, 0.90, 1.13, 0.96, 1.03,
     "Narayanan et al. Table 1 (development); Korthikanti et al. Table 5, the Megatron-LM README's 2020 "
     "scaling tables and FlagPerf's Llama-3-8B-shaped Megatron-Core run at TP 8 on 8 A800 (held out)"},
    {"ampere megatron moe pipeline", 2, 0.255, 1.25, 1.26, 1.25, 1.26,
     "held out: FlagPerf's Qwen1.5-style 8-expert MoE on 8 A800 (Pai-Megatron-Patch, PP 2, bf16 and fp16)"},
    {"ampere megatron pipeline", 19, 0.039, 0.99, 1.10, 1.00, 1.08,
     "Narayanan et al. Table 1 (development); Korthikanti et al. Table 5, Megatron GPT-3 175B, FlagPerf's "
     "Llama-3-8B-shaped Megatron-Core runs on 8 A800 at PP 2-8 (held out)"},
    {"blackwell megatron", 14, 0.152, 0.95, 1.30, 1.01, 1.25,
     "held out: Megatron-Bridge's Llama 3 8B FP8 and MXFP8 on 8 B200, GB200 and GB300, and Llama 3 70B and "
     "3.1 405B under Megatron-FSDP with CPU activation offloading on GB200 and GB300 (Hopper's kernel "
     "efficiencies assumed)"},
    {"blackwell megatron moe", 52, 0.307, 0.69, 2.83, 0.83, 1.95,
     "held out: Megatron-Bridge's gpt-oss-120b, Qwen3-30B-A3B, Qwen3-235B-A22B, DeepSeek-V3 on B200, B300, GB200, GB300 (bf16, MXFP8)"},
    {"blackwell megatron moe host-sensitive", 2, 2.112, 3.05, 3.18, 3.06, 3.16,
     "held out: Megatron-Bridge's Qwen3-30B-A3B MXFP8 on 8 B200, releases 25.11 and 26.02 (a third of 26.02.01's speed on the same layout)"},
    {"blackwell megatron moe pipeline", 58, 0.183, 0.77, 2.40, 0.81, 1.62,
     "held out: Megatron-Bridge's DeepSeek-V3, Kimi K2, Qwen3 MoE on B200, B300, GB200, GB300 with pipelines (FP8, MXFP8)"},
    {"blackwell megatron pipeline", 40, 0.134, 0.76, 1.45, 0.93, 1.21,
     "held out: Megatron-Bridge's Llama 3 70B and 3.1 405B in FP8, MXFP8 and NVFP4 on B200, GB200 and GB300"},
    {"hopper ddp", 58, 0.025, 0.92, 1.21, 0.94, 1.05,
     "dsplan's real runs on one H100 and one H200 (PyTorch DDP under torch.amp)"},
    {"hopper ddp host-sensitive", 4, 0.340, 1.11, 1.72, 1.17, 1.61,
     "dsplan's real runs on one H200 VM issuing a kernel every 34 us (small models at micro-batch 1-2)"},
    {"hopper deepspeed", 6, 0.075, 0.94, 1.45, 0.98, 1.30,
     "dsplan's real runs of DeepSpeed bf16 ZeRO 0/1 on one H100; held out: ml-engineering's Llama 3.1 8B "
     "ZeRO-2 on 8 H200, FlagPerf's Baichuan2-13B ZeRO-1 on 16 H800 (1.16x and 1.45x: a per-step cost of about "
     "2 s dsplan does not price)"},
    {"hopper deepspeed host-sensitive", 3, 0.090, 0.89, 0.91, 0.89, 0.91,
     "held out: FlagPerf's Llama-2-7B ZeRO-3 on 8 H800 and ChatGLM3-6B ZeRO-3 on 8 H100 (DeepSpeed 0.11.1), DeepSpeedExamples' 6.9B ZeRO-3 on 4 H100 at 512 tokens (ZeRO-3's submodule hooks as host time)"},
    {"hopper deepspeed offload", 1, 0.246, 0.75, 0.75, 0.75, 0.75,
     "held out: ml-engineering's Llama 3.1 8B ZeRO-3 with CPU AdamW on 8 H200 at 8K tokens (DeepSpeed 0.19.2; "
     "faster than predicted: its host ran the step at >= 0.34 of its DRAM bandwidth, dsplan assumes 0.2)"},
    {"hopper deepspeed offload long-sequence", 5, 0.162, 0.81, 0.85, 0.82, 0.85,
     "held out: ml-engineering's Llama 3.1 8B ZeRO-3 with CPU AdamW on 8 H200, 32K-256K tokens "
     "(FlashAttention-3; all faster than predicted)"},
    {"hopper deepspeed pipeline long-sequence", 1, 1.162, 2.16, 2.16, 2.16, 2.16,
     "held out: Lucie-7B's context extension on 128 H100 (Megatron-DeepSpeed, TP 4 PP 4, run with "
     "CUDA_LAUNCH_BLOCKING=1, which dsplan does not price)"},
    {"hopper fsdp", 17, 0.048, 0.99, 1.15, 1.01, 1.14,
     "held out: llm-foundry MPT, torchtitan and IBM FMS Llama runs on H100"},
    {"hopper fsdp long-sequence", 4, 0.027, 1.02, 1.05, 1.02, 1.04,
     "held out: llm-foundry MPT at 16K-64K tokens on 8 H100 (Triton attention)"},
    {"hopper megatron", 30, 0.057, 0.94, 1.38, 1.00, 1.28,
     "held out: NeMo and Megatron-Core recipes and tables on H100 (bf16 and FP8, context parallelism, "
     "Megatron-FSDP); FlagPerf's Llama-3-8B-shaped Megatron-Core 0.6 runs at TP 2 on 8-440 H100 (1.25-1.38x)"},
    {"hopper megatron long-sequence", 7, 0.528, 1.29, 1.62, 1.36, 1.59,
     "held out: NeMo 24.03's Llama 2 7B FP8 at 16K-1M tokens with context parallelism on 16-1024 H100 (all "
     "slower than predicted, more so the longer the sequence)"},
    {"hopper megatron moe", 21, 0.171, 0.90, 1.31, 0.91, 1.29,
     "held out: NVIDIA's Grok-1 proxies on 8-64 H100 (bf16, FP8), Llama 4 Maverick on 512 (bf16, FP8) and "
     "Megatron-Bridge's Qwen3-30B-A3B FP8 on 16"},
    {"hopper megatron moe pipeline", 39, 0.237, 0.86, 2.66, 0.92, 1.59,
     "held out: NVIDIA's Grok-1 on 128-2048 H100 and DeepSeek-V3 on 512-1024; Megatron-Bridge's Qwen3-30B-A3B, "
     "Qwen3-235B-A22B, DeepSeek-V3 (FP8) and gpt-oss-120b (bf16); FlagPerf's Mixtral 8x7B at TP 8 on 32 H100"},
    {"hopper megatron pipeline", 54, 0.048, 0.92, 1.35, 0.95, 1.21,
     "held out: NeMo and Megatron-Core recipes on H100, the Llama 3 paper's 405B runs, FlagPerf's "
     "Llama-3-70B-shaped run on 64 H100 and Llama-2-70B on 32 H800 (fp32 with TF32 matmuls, 0.74x)"},
    {"volta ddp", 3, 0.072, 0.92, 0.93, 0.92, 0.93,
     "Hugging Face Trainer BERT-large on one V100 (development)"},
    {"volta ddp host-sensitive", 2, 0.036, 0.94, 0.99, 0.94, 0.99,
     "Hugging Face Trainer BERT-large on one V100 at micro-batch 1 (development)"},
    {"volta deepspeed", 27, 0.055, 0.88, 2.35, 0.89, 1.24,
     "DeepSpeed autotuner metric on a 16-V100 node (development and held out); held out: DeepSpeed's 2020 "
     "tutorials on 32-64 V100 (ZeRO-1 and ZeRO-2; the 2.35x a ZeRO-2 10B whose network is not stated)"},
    {"volta deepspeed offload", 5, 0.101, 0.90, 1.12, 0.90, 1.04,
     "held out: the DeepSpeed ZeRO-Offload tutorial's 10B GPT-2 and STRONGHOLD's ZeRO-Offload/Infinity "
     "baselines (1.7B, 2.5B, fp32, the client's torch AdamW on the host) on one V100"},
    {"volta deepspeed pipeline", 5, 0.050, 1.02, 1.14, 1.03, 1.10,
     "BigScience 104B on 128 V100 (development evidence)"},
    {"volta megatron", 12, 0.042, 0.86, 1.04, 0.87, 1.00,
     "DLPerf Megatron on DGX-1 (development); the Megatron-LM README's 2020 scaling table on a DGX-2 "
     "(held out; pre-2020-09 Megatron code is not evidence for today's)"},
}};
// Peak memory: the matching figure (allocated, reserved or device) measured / predicted.
constexpr std::array<EvidenceBand, 16> kMemoryBands{{
    {"ampere ddp", 19, 0.105, 0.80, 1.77, 0.85, 1.24,
     "held out: FlagPerf's BERT-large, GPT-2 medium, DistilBERT, MLPerf BERT and CPM-1 on 1-16 A100 40GB "
     "(nvidia-smi; TF32, torch.amp, apex O2 and pure bf16)"},
    {"ampere deepspeed", 5, 0.304, 0.94, 1.38, 0.94, 1.35,
     "held out: FlagPerf's Llama-2-7B ZeRO-3 and through Megatron-DeepSpeed on 8 A800/A100 (nvidia-smi)"},
    {"ampere deepspeed offload", 11, 0.435, 1.23, 2.73, 1.24, 2.73,
     "held out: OPT-Benchmark's OPT 13B and 30B ZeRO-3 Offload on A100 (peak allocated 1.23-1.26x, reserved "
     "1.43-2.73x), Colossal-AI's Lightning benchmark 18B on one A100 40GB (ZeRO-3 Offload; peak allocated)"},
    {"ampere megatron", 1, 0.218, 1.22, 1.22, 1.22, 1.22,
     "held out: FlagPerf's Llama-3-8B-shaped Megatron-Core run at TP 8 on 8 A800 (nvidia-smi)"},
    {"ampere megatron moe pipeline", 2, 0.059, 1.00, 1.12, 1.01, 1.10,
     "held out: FlagPerf's Qwen1.5-style MoE on 8 A800 (nvidia-smi)"},
    {"ampere megatron pipeline", 6, 0.125, 0.81, 1.16, 0.83, 1.13,
     "held out: FlagPerf's Llama-3-8B-shaped Megatron-Core runs on 8 A800, PP 2-8 (nvidia-smi)"},
    {"hopper ddp", 62, 0.002, 0.99, 1.01, 1.00, 1.00,
     "dsplan's real runs on one H100 and one H200 (PyTorch DDP under torch.amp; peak allocated)"},
    {"hopper deepspeed", 10, 0.037, 0.93, 1.47, 0.94, 1.42,
     "dsplan's real runs of DeepSpeed bf16 ZeRO 0/1 on one H100; held out: DeepSpeedExamples' 6.9B ZeRO-3 on 4 "
     "H100 (peak allocated), FlagPerf's ChatGLM3-6B and Llama-2-7B ZeRO-3 on 8 H100/H800 (nvidia-smi, 1.41-1.47x) "
     "and Baichuan2-13B ZeRO-1 on 16 H800, ml-engineering's Llama 3.1 8B ZeRO-2 on 8 H200 (peak reserved)"},
    {"hopper deepspeed offload", 6, 0.158, 0.82, 1.65, 0.83, 1.37,
     "held out: ml-engineering's Llama 3.1 8B ZeRO-3 with CPU AdamW on 8 H200 (peak reserved; 1.65x at 8K "
     "tokens, where the peak likely holds the whole model DeepSpeed placed on each GPU at start-up)"},
    {"hopper fsdp", 2, 0.062, 0.93, 0.94, 0.93, 0.94,
     "held out: torchtitan's Llama 3.1 8B on 8 and 128 H100s (peak reserved)"},
    {"hopper megatron", 5, 0.149, 1.11, 1.19, 1.12, 1.18,
     "held out: FlagPerf's Llama-3-8B-shaped Megatron-Core runs on 8-440 H100 at TP 2, bf16 and FP8 (nvidia-smi)"},
    {"hopper megatron moe pipeline", 1, 0.314, 1.31, 1.31, 1.31, 1.31,
     "held out: FlagPerf's Mixtral 8x7B at TP 8 PP 2 on 32 H100 (nvidia-smi)"},
    {"hopper megatron pipeline", 5, 0.137, 1.00, 1.26, 1.05, 1.23,
     "held out: FlagPerf's Llama-3-70B-shaped run on 64 H100 and Llama-2-70B on 32 H800 (nvidia-smi)"},
    {"volta ddp", 5, 0.040, 0.96, 1.08, 0.97, 1.07,
     "Hugging Face Trainer BERT-large on one V100 (nvidia-smi; development)"},
    {"volta deepspeed offload", 8, 0.229, 1.00, 1.94, 1.00, 1.85,
     "held out: STRONGHOLD's ZeRO-Offload/Infinity baselines on one V100 (peak allocated 1.00-1.04x, "
     "reserved 1.42-1.94x: the caching allocator held up to twice what was allocated)"},
    {"volta megatron", 8, 0.126, 1.06, 1.85, 1.09, 1.85,
     "DLPerf Megatron-LM on DGX-1 V100 16GB (nvidia-smi; development; TP 4-8 held far more than priced)"},
}};
// clang-format on

}  // namespace

EvidenceRegime evidence_regime(const Evaluation& e, GpuArch arch) {
  EvidenceRegime r;
  r.arch = arch;
  r.framework = e.cfg.framework;
  r.pipelined = e.cfg.pp > 1;
  r.moe = e.moe;
  r.offload = e.cfg.offload != Offload::none;
  r.long_sequence = e.cfg.seq_len >= kLongSequence;
  const double gpu_work = e.time.step.v - e.time.host_stall.v;
  r.host_sensitive = gpu_work > 0 && e.time.host_issue.v >= kHostSensitiveShare * gpu_work;
  return r;
}

std::string regime_name(const EvidenceRegime& r, EvidenceKind k) {
  std::string s = std::string(name(r.arch)) + " " + name(r.framework);
  if (r.moe) s += " moe";  // MoE layers lean on their own, less tested, part of the model
  if (r.offload) s += " offload";  // so does a host optimizer step: CPU Adam, PCIe copies
  if (r.pipelined) s += " pipeline";
  if (r.long_sequence && k == EvidenceKind::step) s += " long-sequence";
  if (r.host_sensitive && k == EvidenceKind::step) s += " host-sensitive";
  return s;
}

EvidenceBand evidence_band_of(std::vector<double> ratios) {
  EvidenceBand b;
  if (ratios.empty()) return b;
  std::sort(ratios.begin(), ratios.end());
  std::vector<double> dev;
  for (double x : ratios) dev.push_back(std::fabs(x - 1));
  std::sort(dev.begin(), dev.end());
  b.runs = static_cast<int>(ratios.size());
  b.median_abs_error = quantile(dev, 0.5);
  b.low = ratios.front();
  b.high = ratios.back();
  b.p10 = quantile(ratios, 0.1);
  b.p90 = quantile(ratios, 0.9);
  return b;
}

bool same_band(const EvidenceBand& a, const EvidenceBand& b) {
  auto near = [](double x, double y) { return std::fabs(x - y) <= 0.006; };
  return a.runs == b.runs && std::fabs(a.median_abs_error - b.median_abs_error) <= 0.0006 &&
         near(a.low, b.low) && near(a.high, b.high) && near(a.p10, b.p10) && near(a.p90, b.p90);
}

std::span<const EvidenceBand> evidence_bands(EvidenceKind k) {
  if (k == EvidenceKind::memory) return kMemoryBands;
  return kBands;
}

std::optional<EvidenceBand> evidence_band(const EvidenceRegime& r, EvidenceKind k) {
  const std::string name = regime_name(r, k);
  const auto bands = evidence_bands(k);
  const auto it =
      std::find_if(bands.begin(), bands.end(), [&](const EvidenceBand& b) { return name == b.regime; });
  if (it == bands.end()) return std::nullopt;
  return *it;
}

}  // namespace dsplan
