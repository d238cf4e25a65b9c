// Row descriptions for the published-measurement validation (see validation_rows.h).
#include "validation_rows.h"

#include "fixtures.h"

namespace dsplan::test {

namespace {

TrainConfig config(Framework f, Precision p, int tp, int pp, int dp, int mb, int gas, int seq,
                   Checkpointing ck, int zero = 0) {
  TrainConfig c;
  c.framework = f;
  c.precision = p;
  c.tp = tp;
  c.pp = pp;
  c.dp = dp;
  c.micro_batch = mb;
  c.grad_accum = gas;
  c.seq_len = seq;
  c.checkpointing = ck;
  c.zero_stage = zero;
  return c;
}

// Narayanan et al. 2021 Table 1 (weak scaling on Selene). Micro-batch 1 is assumed (not
// in the table); plain 1F1B (the interleaving factor is not given).
void megatron_table1(std::vector<Row>& rows) {
  struct T { const char* id; int l, h, a, tp, pp, dp, batch; };
  const T t[] = {{"megatron_t1_1.7B", 24, 2304, 24, 1, 1, 32, 512},
                 {"megatron_t1_3.6B", 30, 3072, 32, 2, 1, 32, 512},
                 {"megatron_t1_7.5B", 36, 4096, 32, 4, 1, 32, 512},
                 {"megatron_t1_18.4B", 40, 6144, 48, 8, 1, 32, 1024},
                 {"megatron_t1_39.1B", 48, 8192, 64, 8, 2, 32, 1536},
                 {"megatron_t1_76.1B", 60, 10240, 80, 8, 4, 32, 1792},
                 {"megatron_t1_145.6B", 80, 12288, 96, 8, 8, 24, 2304},
                 {"megatron_t1_310.1B", 96, 16384, 128, 8, 16, 15, 2160},
                 {"megatron_t1_529.6B", 105, 20480, 128, 8, 35, 9, 2520},
                 {"megatron_t1_1008.0B", 128, 25600, 160, 8, 64, 6, 3072}};
  for (const T& r : t) {
    const int gpus = r.tp * r.pp * r.dp;
    rows.push_back({r.id, gpt(r.id, r.l, r.h, r.a, 2048, 51200, 128), cluster(dgx_a100(), gpus),
                    config(Framework::megatron, Precision::fp16, r.tp, r.pp, r.dp, 1,
                           r.batch / r.dp, 2048, Checkpointing::full),
                    Metric::megatron_tflops});
  }
}

// NVIDIA DeepLearningExamples-style Megatron runs on a DGX-1 (V100 16GB), fp16, full
// activation checkpointing, iteration time.
void dlperf(std::vector<Row>& rows) {
  const ModelSpec big = gpt("gpt-h1536-l16", 16, 1536, 16, 2048, 50257, 128);
  const ModelSpec small = gpt("gpt-h768-l12", 12, 768, 12, 2048, 50257, 128);
  struct D { const char* id; bool small; int tp, dp, mb; };
  const D d[] = {{"dlperf_megatron_DP_1x1x1_2_1536x16", false, 1, 1, 2},
                 {"dlperf_megatron_DP_8x1x1_16_1536x16", false, 1, 8, 2},
                 {"dlperf_megatron_MP_1x1x1_8_768x12", true, 1, 1, 8},
                 {"dlperf_megatron_MP_1x8x1_16_1536x16", false, 8, 1, 16},
                 {"dlperf_megatron_2D_8x1x1_16_1536x16", false, 1, 8, 2},
                 {"dlperf_megatron_2D_1x8x1_16_1536x16", false, 8, 1, 16},
                 {"dlperf_megatron_2D_2x4x1_16_1536x16", false, 4, 2, 8},
                 {"dlperf_megatron_2D_4x2x1_16_1536x16", false, 2, 4, 4}};
  for (const D& r : d)
    rows.push_back({r.id, r.small ? small : big, cluster(dgx1(), r.tp * r.dp),
                    config(Framework::megatron, Precision::fp16, r.tp, 1, r.dp, r.mb, 1, 2048,
                           Checkpointing::full),
                    Metric::iteration_ms});
}

// Hugging Face Trainer, bert-large-uncased sequence classification, one V100-SXM2 16GB.
void hf_bert_large(std::vector<Row>& rows) {
  const ModelSpec m = bert_cls("bert-large", 24, 1024, 16, 30522, 2, true);
  const Cluster c = cluster(dgx1(), 1);
  struct H { const char* id; Precision p; int mb, gas; bool ckpt; };
  const H h[] = {{"hf_bertlarge_bs4_fp32_AdamW", Precision::fp32, 4, 1, false},
                 {"hf_bertlarge_bs1_ga4", Precision::fp32, 1, 4, false},
                 {"hf_bertlarge_bs1_ga4_+_grad_ckpt", Precision::fp32, 1, 4, true},
                 {"hf_bertlarge_bs4_fp16", Precision::fp16, 4, 1, false},
                 {"hf_bertlarge_bs1_ga4_ckpt_fp16", Precision::fp16, 1, 4, true}};
  for (const H& r : h)
    rows.push_back({r.id, m, c,
                    config(Framework::ddp, r.p, 1, 1, 1, r.mb, r.gas, 512,
                           r.ckpt ? Checkpointing::full : Checkpointing::none),
                    Metric::samples_per_s, true});
}

ModelSpec ds_model(const std::string& name) {
  if (name == "DistilBERT") return bert_cls("distilbert", 6, 768, 12, 30522, 0, false);
  if (name == "BERT-base") return bert_cls("bert-base-cased", 12, 768, 12, 28996, 2, true);
  // Hugging Face GPT-2 runs gelu_new as a chain of elementwise kernels (as the gpt2
  // presets and `dsplan validate` say).
  ModelSpec m = name == "GPT2-medium" ? gpt("gpt2-medium", 24, 1024, 16, 1024, 50257, 1)
                                      : gpt("gpt2-large", 36, 1280, 20, 1024, 50257, 1);
  m.activation_unfused = true;
  return m;
}

// DeepSpeedExamples autotuning/hf on one 16-GPU V100 node (DGX-2 assumed).
void deepspeed_autotuning(std::vector<Row>& rows) {
  struct A { const char* id; const char* model; Framework f; int zero, mb; bool metric; };
  const A a[] = {
      {"ds_autotune_DistilBERT_baseline_DDP", "DistilBERT", Framework::ddp, 0, 256, false},
      {"ds_autotune_DistilBERT_HF+DS_hand-tuned", "DistilBERT", Framework::deepspeed, 0, 256, false},
      {"ds_autotune_BERT-base_baseline_DDP", "BERT-base", Framework::ddp, 0, 128, false},
      {"ds_autotune_BERT-base_HF+DS_hand-tuned", "BERT-base", Framework::deepspeed, 0, 128, false},
      {"ds_autotune_BERT-base_HF+DS_autotuned", "BERT-base", Framework::deepspeed, 0, 220, false},
      {"ds_autotune_GPT2-medium_baseline_DDP", "GPT2-medium", Framework::ddp, 0, 2, false},
      {"ds_autotune_GPT2-medium_HF+DS_hand-tuned", "GPT2-medium", Framework::deepspeed, 1, 4, false},
      {"ds_autotune_GPT2-medium_HF+DS_autotuned", "GPT2-medium", Framework::deepspeed, 1, 6, false},
      {"ds_autotune_GPT2-large_baseline_DDP", "GPT2-large", Framework::ddp, 0, 1, false},
      {"ds_autotune_GPT2-large_HF+DS_hand-tuned", "GPT2-large", Framework::deepspeed, 1, 2, false},
      {"ds_autotune_GPT2-large_HF+DS_autotuned", "GPT2-large", Framework::deepspeed, 1, 3, false},
      {"ds_autotune_space_DistilBERT_z0", "DistilBERT", Framework::deepspeed, 0, 256, true},
      {"ds_autotune_space_DistilBERT_z1", "DistilBERT", Framework::deepspeed, 1, 256, true},
      {"ds_autotune_space_DistilBERT_z2", "DistilBERT", Framework::deepspeed, 2, 256, true},
      {"ds_autotune_space_DistilBERT_z3", "DistilBERT", Framework::deepspeed, 3, 256, true},
      {"ds_autotune_space_BERT-base_z0", "BERT-base", Framework::deepspeed, 0, 220, true},
      {"ds_autotune_space_BERT-base_z1", "BERT-base", Framework::deepspeed, 1, 220, true},
      {"ds_autotune_space_BERT-base_z2", "BERT-base", Framework::deepspeed, 2, 240, true},
      {"ds_autotune_space_BERT-base_z3", "BERT-base", Framework::deepspeed, 3, 240, true},
      {"ds_autotune_space_GPT2-medium_z0", "GPT2-medium", Framework::deepspeed, 0, 5, true},
      {"ds_autotune_space_GPT2-medium_z1", "GPT2-medium", Framework::deepspeed, 1, 6, true},
      {"ds_autotune_space_GPT2-medium_z2", "GPT2-medium", Framework::deepspeed, 2, 6, true},
      {"ds_autotune_space_GPT2-large_z0", "GPT2-large", Framework::deepspeed, 0, 2, true},
      {"ds_autotune_space_GPT2-large_z1", "GPT2-large", Framework::deepspeed, 1, 3, true},
      {"ds_autotune_space_GPT2-large_z2", "GPT2-large", Framework::deepspeed, 2, 3, true}};
  for (const A& r : a) {
    const ModelSpec m = ds_model(r.model);
    const bool gpt2 = m.causal;
    const Precision p = gpt2 ? Precision::fp16 : Precision::fp32;
    TrainConfig cfg = config(r.f, p, 1, 1, 16, r.mb, 1, gpt2 ? 1024 : 128, Checkpointing::none, r.zero);
    cfg.fused_optimizer = 0;  // the ds_configs have no "optimizer" block: HF Trainer's AdamW
    rows.push_back({r.id, m, cluster(dgx2(), 16), cfg,
                    r.metric ? Metric::autotuner : Metric::samples_per_s, !r.metric});
  }
}

// Alibaba PAI-Megatron-Patch benchmark: GPT 1.3B on 4 V100-32GB (NVLink assumed),
// micro-batch 1, global batch 4; BERT-base pre-training (MLM, logits) micro-batch 16.
void pai(std::vector<Row>& rows) {
  const ModelSpec gpt13 = gpt("gpt-1.3b", 24, 2048, 32, 1024, 50257, 128);
  SystemSpec s = dgx1();
  s.gpu = v100(32);
  const Cluster c = cluster(s, 4);
  struct P { const char* id; Framework f; int zero, tp, pp; };
  const P p[] = {{"pai_gpt1.3b_mixed_precision", Framework::megatron, 0, 1, 1},
                 {"pai_gpt1.3b_zero1", Framework::deepspeed, 1, 1, 1},
                 {"pai_gpt1.3b_zero2", Framework::deepspeed, 2, 1, 1},
                 {"pai_gpt1.3b_3d_tp1_pp1", Framework::megatron, 0, 1, 1},
                 {"pai_gpt1.3b_3d_tp2_pp1", Framework::megatron, 0, 2, 1},
                 {"pai_gpt1.3b_3d_tp4_pp1", Framework::megatron, 0, 4, 1},
                 {"pai_gpt1.3b_3d_tp1_pp2", Framework::megatron, 0, 1, 2},
                 {"pai_gpt1.3b_3d_tp1_pp4", Framework::megatron, 0, 1, 4},
                 {"pai_gpt1.3b_3d_tp2_pp2", Framework::megatron, 0, 2, 2}};
  for (const P& r : p) {
    const int dp = 4 / (r.tp * r.pp);
    rows.push_back({r.id, gpt13, c,
                    config(r.f, Precision::fp16, r.tp, r.pp, dp, 1, 4 / dp, 1024, Checkpointing::none, r.zero),
                    Metric::samples_per_s, true});
  }
  ModelSpec bert = bert_cls("bert-base-uncased", 12, 768, 12, 30522, 2, true);
  bert.vocab_logits = true;  // pre-training: MLM logits over the vocabulary
  for (auto [id, prec] : {std::pair{"pai_bert_base_pretrain_fp32", Precision::fp32},
                          std::pair{"pai_bert_base_pretrain_fp16", Precision::fp16}})
    rows.push_back({id, bert, c, config(Framework::ddp, prec, 1, 1, 4, 16, 1, 512, Checkpointing::none),
                    Metric::samples_per_s, true});
}

}  // namespace

std::vector<Row> validation_rows() {
  std::vector<Row> rows;
  megatron_table1(rows);
  dlperf(rows);
  hf_bert_large(rows);
  deepspeed_autotuning(rows);
  pai(rows);
  return rows;
}

}  // namespace dsplan::test
