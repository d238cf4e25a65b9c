// The forward of each Megatron-Core selective-recompute module (recompute_modules.h).
#include "estimator/time/recompute_modules.h"

#include <algorithm>
#include <initializer_list>

#include "estimator/time/elementwise.h"
#include "estimator/time/mla.h"
#include "estimator/time/moe.h"

namespace dsplan::op {

void module_costs(OpCosts& o, const Dims& d, const Acc& core, const Acc& blank) {
  auto put = [&](RecomputeModule r, const Acc& a) {
    o.modules[std::size_t(r)] = {a.t, host_time(a.launches, a.eff), a.f};
  };
  auto gemms = [&](Acc& a, std::initializer_list<LayerLinear> roles) {
    a.linear_operands(d.linear_p, d.fp8 && d.mxfp8);
    for (const LinearShape& g : layer_gemm_shapes(d))
      if (std::find(roles.begin(), roles.end(), g.role) != roles.end()) a.linear(g.m, g.n, g.k, g.batch);
    a.linear_operands(d.gemm_p, false);
  };
  put(RecomputeModule::core_attn, core);
  if (d.mla) {
    Acc up = blank;
    up.linear_operands(d.linear_p, d.fp8 && d.mxfp8);
    for (const MlaGemm& g : mla_input_gemms(d))
      if (g.up) up.linear(g.m, g.n, g.k);
    up.mem(mla_rope_elementwise(d).fwd);
    put(RecomputeModule::mla_up_proj, up);
  }
  const double shared = d.moe ? d.T * d.fs / d.t : 0.0;  // shared-expert intermediate elements
  if (d.moe) {
    Acc act = blank, sh = blank, moe = blank;
    act.mem(activation_elementwise(d, d.routed * d.fe).fwd);
    put(RecomputeModule::moe_act, act);
    if (d.fs > 0) {
      gemms(sh, {kFc1, kFc2});
      sh.mem(activation_elementwise(d, shared).fwd);
      put(RecomputeModule::shared_experts, sh);
    }
    gemms(moe, {kFc1, kFc2, kMoe});
    moe.mem(activation_elementwise(d, shared + d.routed * d.fe).fwd);
    moe.mem(moe_elementwise(d).fwd);
    put(RecomputeModule::moe, moe);
  } else {  // the dense MLP with the norm fused into its FC1 (TE's LayerNormLinear)
    Acc mlp = blank;
    gemms(mlp, {kFc1, kFc2});
    mlp.mem(activation_elementwise(d, d.T * d.f / d.t).fwd);
    mlp.mem(d.Ts * d.h * 2.0 * d.ew);
    put(RecomputeModule::mlp, mlp);
  }
  // Norms that are modules of their own in Megatron's TE spec: MLA's input norm and an MoE
  // layer's pre-MLP norm; one fused kernel each, reading and writing Ts x h.
  const int separate = (d.mla ? 1 : 0) + (d.moe ? 1 : 0);
  if (separate > 0) {
    Acc ln = blank;
    ln.mem(separate * d.Ts * d.h * 2.0 * d.ew, separate);
    put(RecomputeModule::layernorm, ln);
  }
}

}  // namespace dsplan::op
