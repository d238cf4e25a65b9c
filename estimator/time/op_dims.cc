// Dimensions of one layer's operators from the model and the configuration (op_dims.h).
#include "estimator/time/op_dims.h"

#include <algorithm>
#include <cmath>

#include "estimator/time/mla.h"

namespace dsplan::op {

Dims dims(const ModelSpec& m, const OpKey& k) {
  Dims d{};
  const double hd = head_dim_of(m);
  d.b = k.micro_batch;
  d.s = k.seq_len;
  d.h = m.hidden;
  d.t = std::max(1, k.tp);
  d.heads = m.heads / d.t;
  d.hq = m.heads * hd;
  d.hkv = kv_heads_of(m) * hd;
  d.f = active_ffn(m);
  d.T = d.b * d.s;
  d.Ts = k.sequence_parallel ? d.T / d.t : d.T;
  d.e = element_bytes(k.precision);
  d.autocast = TrainConfig::torch_autocast(k.framework, k.precision, k.half_model);
  d.ew = d.autocast ? 4.0 : d.e;
  d.gated = m.gated_mlp;
  d.megatron = k.framework == Framework::megatron;
  d.fused_elementwise = d.megatron && !k.megatron_unfused;
  d.attention = k.attention;
  d.cp = std::max(1, k.cp);
  d.flash = flash_supported(k);
  d.causal = m.causal;
  d.act_unfused = m.activation_unfused;
  d.dropout = has_dropout(m);
  d.rms = m.norm == NormKind::rmsnorm;
  d.norm_fused = TrainConfig::rmsnorm_fused(k.norm_kernel, k.framework);
  d.norm16_fused = TrainConfig::rmsnorm16_fused(k.norm_kernel, k.framework, k.precision, k.half_model);
  d.rope = m.position == PositionKind::rotary;
  d.fp8 = k.fp8;
  d.gemm_p = gemm_precision(k);
  d.linear_p = TrainConfig::linear_precision(k.fp8, k.fp8_recipe, d.gemm_p);
  d.mxfp8 = k.fp8 && k.fp8_recipe == Fp8Recipe::mxfp8;
  d.expert_row_align = !k.fp8                             ? 1.0
                       : k.fp8_recipe == Fp8Recipe::nvfp4 ? 128.0
                       : k.fp8_recipe == Fp8Recipe::mxfp8 ? 32.0
                                                          : 16.0;
  d.norms = m.norms_per_layer;
  d.qk_norm = m.qk_norm;
  d.attn_softcap = m.attn_softcap;
  d.attn_sinks = m.attention_sinks;
  d.act_clamp = m.activation_clamp && m.gated_mlp;
  d.window = m.attention_window;
  d.window_share = m.layers > 0 ? double(windowed_layers_of(m)) / m.layers : 0.0;
  d.linears = layer_linears(m, TrainConfig::megatron_layers(k.framework, k.tp));
  d.moe = is_moe(m);
  d.experts = m.experts;
  d.topk = m.topk;
  d.fe = m.moe_ffn;
  d.fs = m.shared_ffn;
  d.ep = std::max(1, k.ep);
  d.etp = std::max(1, k.etp);
  d.routed = d.moe ? d.Ts * d.topk : 0.0;
  d.permute_atomic = d.moe && k.permute_atomic;
  d.moe_bias = d.moe && m.moe_bias;
  d.mla = is_mla(m);
  d.ql = m.q_lora_rank;
  d.kvl = m.kv_lora_rank;
  d.dr = d.mla ? m.qk_rope_head_dim : 0.0;
  d.hout = m.heads * double(v_head_dim_of(m));
  if (d.mla) {  // every head has its own key (kv_heads = heads), qk_head_dim_of wide
    d.hq = d.hkv = m.heads * double(qk_head_dim_of(m));
    d.rope = false;  // the rotary part alone rotates: mla_elementwise prices it
  }
  return d;
}

std::vector<LinearShape> layer_gemm_shapes(const Dims& d) {
  std::vector<LinearShape> v;
  if (d.mla) {
    for (const MlaGemm& g : mla_input_gemms(d)) v.push_back({g.m, g.n, g.k, kQkv});
  } else if (d.linears.qkv == 1) {
    v.push_back({d.T, (d.hq + 2.0 * d.hkv) / d.t, d.h, kQkv});
  } else {
    v.push_back({d.T, d.hq / d.t, d.h, kQkv});
    v.push_back({d.T, d.hkv / d.t, d.h, kQkv});
    v.push_back({d.T, d.hkv / d.t, d.h, kQkv});
  }
  v.push_back({d.T, d.h, d.hout / d.t, kProj});
  const double g = d.gated ? 2.0 : 1.0, f = d.moe ? d.fs : d.f;
  if (f > 0) {
    for (int i = 0; i < d.linears.up_gate; ++i)
      v.push_back({d.T, f * g / d.linears.up_gate / d.t, d.h, kFc1});
    v.push_back({d.T, d.h, f / d.t, kFc2});
  }
  if (d.moe) {
    // Expert TP: the etp ranks gather each other's received tokens and split the widths.
    // In FP8 each expert's rows are padded to the quantization's alignment (Megatron-Core's
    // Fp8Padding, or the router's padding for quantization): balanced routing of 384 experts
    // gives 10,922.67 rows an expert, run as 10,928 (not a misaligned GEMM).
    const double rows = d.etp * d.ep * d.routed / d.experts, local = d.experts / d.ep;
    const double a = d.expert_row_align;
    const double per_expert = a > 1 ? std::ceil(rows / a) * a : rows;
    v.push_back({d.Ts, d.experts, d.h, kMoe});
    v.push_back({per_expert, d.fe * g / d.etp, d.h, kMoe, local});
    v.push_back({per_expert, d.h, d.fe / d.etp, kMoe, local});
  }
  return v;
}

}  // namespace dsplan::op
