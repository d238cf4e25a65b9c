// The small model and batch layout confirm's plan tests share (ds_config_test.cc,
// megatron_args_test.cc): a GPT-2-small-shaped model and a TrainConfig of a ZeRO stage,
// micro-batch, accumulation and data-parallel degree.
#pragma once

#include "core/model_spec.h"
#include "core/train_config.h"

namespace dsplan::test {

inline ModelSpec small_gpt() {
  ModelSpec m;
  m.name = "gpt-small";
  m.layers = 12;
  m.hidden = 768;
  m.heads = 12;
  m.kv_heads = 12;
  m.head_dim = 64;
  m.ffn_hidden = 3072;
  m.vocab = 50257;
  m.max_positions = 1024;
  return m;
}

inline TrainConfig config(int stage, int mbs, int gas, int dp) {
  TrainConfig c;
  c.zero_stage = stage;
  c.micro_batch = mbs;
  c.grad_accum = gas;
  c.dp = dp;
  return c;
}

}  // namespace dsplan::test
