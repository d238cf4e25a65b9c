// What Megatron-Core's selective recompute modules free of a layer's saved activations
// (estimator/memory/activations.cc; docs/model.md §3 "Recompute modules"), and the expert
// outputs that only the older combine saves. Hand-derived on a toy MoE layer with MLA.
#include <gtest/gtest.h>

#include "core/names.h"
#include "estimator/memory.h"
#include "estimator/memory/activations.h"
#include "fixtures.h"

namespace dsplan {
namespace {

// s 8, b 1, h 16, tp 2 with SP, 16-bit, no dropout, flash. MLA widths: Q 24, K 24 and V 16
// (kv their mean, 20), output 16, latents 2 (8 + 4) + 4 = 28. MoE: top-2 of 4 experts 6
// wide (12 routed) and a 6-wide shared expert: f 18. Fused SwiGLU (3 f-tensors); MLA's
// input norm and the pre-MLP norm are separate modules.
LayerShape toy() {
  LayerShape x;
  x.b = 1, x.s = 8, x.h = 16, x.heads = 2, x.q = 24, x.kv = 20, x.out = 16, x.latent = 28;
  x.f = 18, x.f_routed = 12, x.f_shared = 6, x.dense_share = 0;
  x.moe_copies = 2, x.experts = 4, x.mlp_tensors = 3;
  x.t = 2, x.sp = true, x.e = 2, x.dropout = false, x.flash = true, x.separate_norms = 2;
  return x;
}

// Replicated: (2 norm inputs + 2 linear inputs) x 2 B x 8 x 16 / 2 = 512, latents 2 x 8 x 28
// / 2 = 224. Sharded: Q, K, V 2 x 8 x 64 / 2 = 512; output 2 x 8 x 16 / 2 = 128; MLP
// (2 x 2 + 2 = 6 B an element) 6 x 8 x 18 / 2 = 432; MoE 8 / 2 x (2 copies x (2 x 16 + 12)
// + 4 x 4) = 416. Logsumexp 4 x 2 x 8 / 2 = 32. Total 2256.
TEST(RecomputeModulesMemory, ToyLayerWithoutModules) {
  EXPECT_DOUBLE_EQ(layer_activation(toy()).total(), 2256.0);
  EXPECT_DOUBLE_EQ(layer_activation(toy()).recomputed, 0.0);
}

// In FP8 every linear keeps its 1-byte input cast, the experts' grouped linear too: the
// replicated linear inputs 2 x 1 x 8 x 16 / 2 = 128 (norm inputs 256 unchanged, so 384),
// the projection's input 1 x 8 x 16 / 2 = 64, the MLP (2 x 2 + 1 = 5 B an element)
// 5 x 8 x 18 / 2 = 360, and the MoE term 8 / 2 x (2 copies x (1 x 16 + 12) + 4 x 4) = 288
// (416 in 16 bits). With Q, K, V 512, latents 224 and logsumexp 32: 1864.
TEST(RecomputeModulesMemory, Fp8KeepsTheExpertInputsInOneByte) {
  LayerShape x = toy();
  x.fp8 = true;
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), 1864.0);
}

// Each module frees (and rebuilds for the backward, `recomputed`): mla_up_proj Q, K, V (512);
// moe_act the routed FC2 input 2 x 8 x 12 / 2 = 96; layernorm two norm outputs 2 x 2 x 64 =
// 256; shared_experts 6 x 8 x 6 / 2 = 144; moe the MLP's 432 and the MoE term's 416 = 848
// (moe_act and shared_experts inside it add nothing).
TEST(RecomputeModulesMemory, WhatEachModuleFrees) {
  auto freed = [](auto set) {
    LayerShape x = toy();
    set(x);
    const LayerActivation a = layer_activation(x);
    EXPECT_DOUBLE_EQ(a.total() + a.recomputed, 2256.0);
    return a.recomputed;
  };
  EXPECT_DOUBLE_EQ(freed([](LayerShape& x) { x.rc_mla_up_proj = true; }), 512.0);
  EXPECT_DOUBLE_EQ(freed([](LayerShape& x) { x.rc_moe_act = true; }), 96.0);
  EXPECT_DOUBLE_EQ(freed([](LayerShape& x) { x.rc_layernorm = true; }), 256.0);
  EXPECT_DOUBLE_EQ(freed([](LayerShape& x) { x.rc_shared = true; }), 144.0);
  EXPECT_DOUBLE_EQ(freed([](LayerShape& x) { x.rc_moe = true; }), 848.0);
  EXPECT_DOUBLE_EQ(freed([](LayerShape& x) { x.rc_moe = x.rc_moe_act = x.rc_shared = true; }), 848.0);
  EXPECT_DOUBLE_EQ(freed([](LayerShape& x) { x.rc_mlp = true; }), 0.0);  // no dense MLP here
}

// A dense layer (f 32, t 1, no SP): mlp frees 6 x 8 x 32 = 1536 and its fused norm's output
// 2 x 8 x 16 = 256.
TEST(RecomputeModulesMemory, DenseMlp) {
  LayerShape x = toy();
  x.f = 32, x.f_routed = x.f_shared = 0, x.dense_share = 1, x.moe_copies = x.experts = 0;
  x.t = 1, x.sp = false;
  x.rc_mlp = true;
  EXPECT_DOUBLE_EQ(layer_activation(x).recomputed, 1792.0);
}

// The combine that weights expert outputs after the return all-to-all (Megatron-Core before
// 2025-04) saves them: 8 / 2 tokens x 2 copies x 2 B x 16 = 256 more.
TEST(RecomputeModulesMemory, OlderCombineSavesExpertOutputs) {
  LayerShape x = toy();
  x.moe_saves_outputs = true;
  EXPECT_DOUBLE_EQ(layer_activation(x).total(), 2256.0 + 256.0);
}

// On a whole plan, a DeepSeek-V2-Lite-shaped model (27 layers, hidden 2048, 16 heads, kv
// rank 512, rope 64, v 128, 64 experts of 1408, top-6, 2816 shared, first layer dense):
// mla_up_proj recomputed holds less than the default selective recompute; a Megatron
// release before 2025-04 holds more (the expert outputs).
TEST(RecomputeModulesMemory, PlanLevel) {
  ModelSpec m = test::llama_style("v2-lite-rc", 27, 2048, 16, 16, 128, 10944, 102400, 4096);
  m.kv_lora_rank = 512, m.qk_rope_head_dim = 64, m.v_head_dim = 128;
  m.experts = 64, m.topk = 6, m.moe_ffn = 1408, m.shared_ffn = 2816, m.first_dense_layers = 1;
  const MemoryModel mem(m, test::cluster(test::dgx_h200(false), 8));
  TrainConfig cfg;
  cfg.framework = Framework::megatron;
  cfg.dp = 8;
  cfg.ep = 8;
  cfg.seq_len = 4096;
  cfg.flash_attention = true;
  cfg.checkpointing = Checkpointing::selective;
  const double base = mem.estimate(cfg).activations.v;
  cfg.recompute_modules = module_bit(RecomputeModule::mla_up_proj);
  EXPECT_LT(mem.estimate(cfg).activations.v, base);
  cfg.recompute_modules = 0;
  cfg.megatron_release = 202503;
  EXPECT_GT(mem.estimate(cfg).activations.v, base);
}

}  // namespace
}  // namespace dsplan
