// Shared fixtures of the step-time unit tests: a 1.3B GPT, a Megatron bf16 base
// configuration, DGX A100 models/communication setups with the default efficiencies, and
// a B200 node with its Megatron run (FP8/NVFP4 memory).
#pragma once

#include "estimator/step_time.h"
#include "estimator/time/collectives.h"
#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/operators.h"
#include "estimator/time/parallel_comm.h"
#include "fixtures.h"

namespace dsplan::test {

inline ModelSpec gpt_1b() { return gpt("gpt-1.3b", 24, 2048, 32, 2048, 51200, 128); }

inline TrainConfig base_cfg() {
  TrainConfig c;
  c.framework = Framework::megatron;
  c.precision = Precision::bf16;
  c.micro_batch = 2;
  c.grad_accum = 4;
  c.seq_len = 2048;
  c.dp = 8;
  return c;
}

// One B200 node (8 GPUs, NVLink 5 at 900 GB/s/dir, 8 x 400 Gb/s): the FP8 and NVFP4
// memory tests' cluster; and their run, Megatron data-parallel over it, 2048 tokens, flash.
inline Cluster b200_node() {
  return cluster(node(b200(), 8, IntraTopology::nvswitch, 900, 8, 400, 716.8), 8);
}
inline TrainConfig megatron_dp8() {
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.dp = 8;
  cfg.seq_len = 2048;
  cfg.flash_attention = true;
  return cfg;
}

// Megatron bf16 with flash attention, one 4096-token sequence a micro-batch, sequence
// parallelism wherever tp > 1, expert parallelism ep: the MoE and MLA tests' operator key.
inline OpKey megatron_key(int tp, int ep = 1) {
  OpKey k;
  k.tp = tp;
  k.sequence_parallel = tp > 1;
  k.micro_batch = 1;
  k.seq_len = 4096;
  k.flash = true;
  k.precision = Precision::bf16;
  k.framework = Framework::megatron;
  k.ep = ep;
  return k;
}

// DeepSeek-V3's attention on a dense 4-layer decoder: hidden 7168, 128 heads, q_lora_rank
// 1536, kv_lora_rank 512, head_dim (qk_nope) 128, rope 64, v 128; SwiGLU MLP of 18432.
inline ModelSpec deepseek_v3_attention(const std::string& name) {
  ModelSpec m = llama_style(name, 4, 7168, 128, 128, 128, 18432, 129280, 4096);
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 128;
  return m;
}

inline StepTimeModel a100_model(const ModelSpec& m, int gpus) {
  const Cluster c = cluster(dgx_a100(), gpus);
  return StepTimeModel(m, c, default_efficiency(c.node.gpu));
}

// gpt_1b on DGX A100 nodes with the default efficiencies, for parallel_comm() checks.
struct A100Comm {
  ModelSpec m = gpt_1b();
  Cluster c;
  Efficiency eff;
  CollectiveModel coll;
  explicit A100Comm(int gpus)
      : c(cluster(dgx_a100(), gpus)), eff(default_efficiency(c.node.gpu)), coll(c.node, eff) {}
  ParallelComm of(const TrainConfig& cfg) const { return parallel_comm(m, cfg, c.node, c.node.gpu, eff, coll); }
};

}  // namespace dsplan::test
