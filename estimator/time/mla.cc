// Multi-head latent attention's projections, passes and gathered width (mla.h).
#include "estimator/time/mla.h"

namespace dsplan {

std::vector<MlaGemm> mla_input_gemms(const op::Dims& d) {
  std::vector<MlaGemm> v;
  if (!d.mla) return v;
  const double heads = d.heads * d.t, nope = d.hq - heads * d.dr;  // heads x head_dim
  if (d.ql > 0) {
    v.push_back({d.Ts, d.ql, d.h});        // q down, duplicated
    v.push_back({d.T, d.hq / d.t, d.ql, true});  // q up
  } else {
    v.push_back({d.T, d.hq / d.t, d.h, true});  // q projection
  }
  v.push_back({d.Ts, d.kvl + d.dr, d.h});            // kv down, duplicated
  v.push_back({d.T, (nope + d.hout) / d.t, d.kvl, true});  // kv up: keys' nope part and values
  return v;
}

Elementwise mla_elementwise(const op::Dims& d) {
  Elementwise w;
  if (!d.mla) return w;
  // RMSNorms of the latents (one fused kernel forward, two backward, as norm_passes).
  const double latent = d.Ts * (d.ql + d.kvl);
  const int norms = d.ql > 0 ? 2 : 1;
  w.fwd.add(MemKernel::blended, latent * 2.0 * d.e, 0);
  w.bwd.add(MemKernel::blended, latent * 4.0 * d.e, 0);
  w.fwd.kernels += norms, w.bwd.kernels += 2 * norms;
  const Elementwise rope = mla_rope_elementwise(d);
  w.fwd.merge(rope.fwd), w.bwd.merge(rope.bwd);
  return w;
}

Elementwise mla_rope_elementwise(const op::Dims& d) {
  Elementwise w;
  if (!d.mla) return w;
  // Fused rope: the query kernel reads the up projection's output and writes the rotated
  // query; the key/value kernel reads the kv up projection's output and the rotary key and
  // writes the keys (the shared rotary part broadcast to every head) and the values. The
  // backward reverses each, the rotary key's gradient summed over the heads.
  const double heads = d.heads * d.t, nope = d.hq - heads * d.dr;
  const double q = d.T * d.hq / d.t, kv_in = d.T * (nope + d.hout) / d.t + d.T * d.dr;
  const double kv_out = d.T * (d.hq + d.hout) / d.t;
  const double bytes = d.e * (2.0 * q + kv_in + kv_out);
  w.fwd.add(MemKernel::blended, bytes, 0);
  w.bwd.add(MemKernel::blended, bytes, 0);
  w.fwd.kernels += 2, w.bwd.kernels += 2;
  return w;
}

double mla_gathered_width(const ModelSpec& m) {
  if (!is_mla(m)) return m.hidden;
  return double(m.q_lora_rank > 0 ? m.q_lora_rank : m.hidden) + m.kv_lora_rank + m.qk_rope_head_dim;
}

}  // namespace dsplan
