// Alignment advice: which of a model's GEMM dimensions miss the multiple of 8 that 16-bit
// tensor cores want, at the TP degrees searched. See alignment.h.
#include "estimator/time/alignment.h"

#include <cstdio>

#include "estimator/params.h"
#include "estimator/time/gemm.h"

namespace dsplan {

namespace {

bool misaligned(std::int64_t x) { return x % 8 != 0; }

std::string rate_text(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", r);
  return buf;
}

std::string join(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

}  // namespace

std::vector<std::string> alignment_advice(const ModelSpec& m, const std::vector<int>& tps, Precision p,
                                          const GpuSpec& gpu) {
  std::vector<std::string> out;
  if (p == Precision::fp32 || m.heads <= 0) return out;
  const std::string plain = rate_text(misaligned_rate(false, p, gpu));
  const std::string batched = rate_text(misaligned_rate(true, p, gpu));
  const int hd = head_dim_of(m);
  if (misaligned(hd))
    out.push_back("head dimension " + std::to_string(hd) +
                  " is not a multiple of 8: without FlashAttention the attention GEMMs run at " + batched +
                  " of the tensor rate" + (hopper_or_newer(gpu.arch) ? "" : " (the fp32 FMA pipe)") +
                  "; a head count that makes hidden/heads a multiple of 8 avoids it");
  if (misaligned(m.hidden))
    out.push_back("hidden size " + std::to_string(m.hidden) + " is not a multiple of 8: every linear runs at " +
                  plain + " of the tensor rate");
  std::vector<int> vocab_bad, width_bad, width_good;
  std::string widths;
  const int kv = kv_heads_of(m);
  for (int t : tps) {
    if (t < 1 || m.heads % t != 0) continue;
    if (m.vocab_logits && misaligned(padded_vocab(m, t) / t)) vocab_bad.push_back(t);
    const std::int64_t q = std::int64_t(m.heads) * hd / t, qkv = q + 2 * (std::int64_t(kv) * hd / t),
                       ffn = m.ffn_hidden / t;
    if (misaligned(q) || misaligned(qkv) || misaligned(ffn)) {
      if (width_bad.empty())
        widths = "TP " + std::to_string(t) + ": QKV " + std::to_string(qkv) + ", attention output " +
                 std::to_string(q) + ", MLP " + std::to_string(ffn);
      width_bad.push_back(t);
    } else {
      width_good.push_back(t);
    }
  }
  if (!vocab_bad.empty())
    out.push_back("vocabulary " + std::to_string(m.vocab) + " is not a multiple of 8 per GPU at TP " +
                  join(vocab_bad) + ": the logits GEMMs run at " + plain +
                  " of the tensor rate; padding it to a multiple of 8 x TP avoids it");
  if (!width_bad.empty())
    out.push_back("at TP " + join(width_bad) + " the per-GPU widths of the linears are not all multiples of 8 (" +
                  widths + "): those GEMMs run at " + plain + " of the tensor rate" +
                  (width_good.empty() ? std::string() : "; TP " + join(width_good) + " keep them aligned"));
  return out;
}

}  // namespace dsplan
