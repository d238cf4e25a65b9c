// The calibration plan: which GEMMs, bandwidths and collectives a pass measures, with
// repeat counts sized so the default pass stays under 5 minutes and --quick under 1.
#include "calibrate/bench/plan.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "estimator/params.h"

namespace dsplan {
namespace {

// Rough rates used only to weight progress (the ETA corrects itself as items finish).
constexpr double kGuessFlops = 100e12;
constexpr double kGuessHbm = 1.5e12;
constexpr double kGuessPcie = 20e9;
constexpr double kGuessBusbw = 50e9;
constexpr double kLaunch_s = 20e-6;

Repeats gemm_repeats(bool quick) { return quick ? Repeats{2, 7} : Repeats{5, 20}; }
Repeats bw_repeats(bool quick) { return quick ? Repeats{2, 5} : Repeats{3, 15}; }
Repeats coll_repeats(bool quick) { return quick ? Repeats{2, 5} : Repeats{5, 20}; }

GemmCase square(std::int64_t m, std::int64_t n, std::int64_t k, GemmDtype d, const char* label,
                bool quick) {
  return GemmCase{m, n, k, d, label, false, gemm_repeats(quick)};
}

struct Linear {
  const char* op;
  std::int64_t in, out;
};

// The fused layout (Megatron's, and any model's at tp > 1, which only Megatron runs); at
// tp 1 a model whose code has separate Q, K, V or gate, up linears (ModelSpec::fused_qkv,
// fused_gate_up) also gets those shapes, which the frameworks other than Megatron run.
std::vector<Linear> model_linears(const ModelSpec& m, int t) {
  const std::int64_t q = static_cast<std::int64_t>(m.heads / t) * m.head_dim;
  const std::int64_t kv = static_cast<std::int64_t>(std::max(1, m.kv_heads / t)) * m.head_dim;
  const std::int64_t ffn = m.ffn_hidden / t;
  std::vector<Linear> v = {{"qkv", m.hidden, q + 2 * kv},
                           {"proj", q, m.hidden},
                           {"mlp_up", m.hidden, ffn * (m.gated_mlp ? 2 : 1)},
                           {"mlp_down", ffn, m.hidden},
                           {"logits", m.hidden, (m.vocab + t - 1) / t}};
  const LayerLinears lin = layer_linears(m, /*megatron_layers=*/t > 1);
  if (lin.qkv > 1) v.insert(v.end(), {{"q", m.hidden, q}, {"kv", m.hidden, kv}});
  if (lin.up_gate > 1) v.push_back({"mlp_gate_or_up", m.hidden, ffn});
  return v;
}

}  // namespace

double BenchPlan::total_cost_s() const {
  double s = 0;
  for (const auto& i : items) s += i.cost_s;
  return s;
}

std::vector<GemmCase> model_gemm_cases(const ModelSpec& m, const std::vector<int>& tp,
                                       const std::vector<int>& micro_batches, int seq_len,
                                       GemmDtype dtype) {
  std::vector<GemmCase> out;
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> seen;
  for (int t : tp) {
    if (t < 1 || m.heads % t != 0) continue;  // Megatron splits whole heads
    for (int b : micro_batches) {
      const std::int64_t tokens = static_cast<std::int64_t>(b) * seq_len;
      for (const Linear& l : model_linears(m, t)) {
        const std::string tag = m.name + " tp=" + std::to_string(t) + " mbs=" +
                                std::to_string(b) + " " + l.op;
        // forward Y = X W; input gradient dX = dY W^T; weight gradient dW = X^T dY.
        const std::tuple<std::int64_t, std::int64_t, std::int64_t, const char*> passes[] = {
            {tokens, l.out, l.in, " fwd"}, {tokens, l.in, l.out, " dgrad"},
            {l.in, l.out, tokens, " wgrad"}};
        for (auto [mm, nn, kk, pass] : passes) {
          if (!seen.insert({mm, nn, kk}).second) continue;
          out.push_back(GemmCase{mm, nn, kk, dtype, tag + pass, false, {}});
        }
      }
    }
  }
  return out;
}

std::vector<GemmCase> gemm_grid(GemmDtype d, int sm_count, bool quick) {
  std::vector<GemmCase> g;
  // The checked shape: small and deliberately not a multiple of any tile.
  g.push_back(GemmCase{257, 129, 320, d, "check", true, gemm_repeats(quick)});
  const std::vector<std::int64_t> squares =
      quick ? std::vector<std::int64_t>{128, 512, 2048, 8192}
            : std::vector<std::int64_t>{64, 128, 256, 512, 1024, 2048, 4096, 8192};
  for (auto s : squares) g.push_back(square(s, s, s, d, "grid square", quick));
  const std::vector<std::int64_t> ks =
      quick ? std::vector<std::int64_t>{64, 256, 1024}
            : std::vector<std::int64_t>{32, 64, 128, 256, 512, 1024, 2048};
  for (auto k : ks) g.push_back(square(4096, 4096, k, d, "grid k-sweep", quick));
  // N = 8 tiles of 128; M rows of 128-tiles just filling 1 and 2 waves, then one row more.
  const std::int64_t a1 = std::max(1, sm_count / 8), a2 = std::max(1, 2 * sm_count / 8);
  for (auto a : quick ? std::vector<std::int64_t>{a1, a1 + 1}
                      : std::vector<std::int64_t>{a1, a1 + 1, a2, a2 + 1})
    g.push_back(square(128 * a, 1024, 4096, d, "grid wave boundary", quick));
  const std::vector<std::int64_t> odd =
      quick ? std::vector<std::int64_t>{2047, 4097} : std::vector<std::int64_t>{1000, 2047, 4095, 4097};
  for (auto s : odd) g.push_back(square(s, s, s, d, "grid non-aligned", quick));
  if (!quick) g.push_back(square(16384, 1024, 1024, d, "grid skinny", quick));
  return g;
}

std::vector<double> collective_sizes(bool quick, double device_memory_bytes) {
  std::vector<double> s;
  const double step = quick ? 16 : 4;
  // all_gather needs S for output plus S/p input; keep 2 S under a quarter of memory.
  const double cap = device_memory_bytes > 0 ? device_memory_bytes / 8 : 1e30;
  for (double b = 1024; b <= 1024.0 * 1024 * 1024 && b <= cap; b *= step) s.push_back(b);
  return s;
}

namespace {

void add_gemms(const std::vector<GemmCase>& cases, bool quick, BenchPlan& plan) {
  for (GemmCase c : cases) {
    c.repeats = gemm_repeats(quick);
    PlanItem it;
    it.kind = PlanItem::Kind::gemm;
    it.gemm = c;
    it.repeats = c.repeats;
    const double flops = 2.0 * c.m * c.n * c.k;
    it.cost_s = (c.repeats.warmup + c.repeats.timed) * (flops / kGuessFlops + kLaunch_s);
    it.label = std::string("gemm ") + name(c.dtype) + " " + std::to_string(c.m) + "x" +
               std::to_string(c.n) + "x" + std::to_string(c.k);
    plan.items.push_back(it);
  }
}

void add_bandwidths(bool quick, BenchPlan& plan) {
  const double GiB = 1024.0 * 1024 * 1024;
  const std::vector<double> hbm = quick ? std::vector<double>{GiB} : std::vector<double>{GiB / 4, GiB};
  const std::vector<double> pcie = quick ? std::vector<double>{GiB / 16}
                                         : std::vector<double>{GiB / 1024, GiB / 64, GiB / 4};
  auto add = [&](BandwidthKind k, double bytes, double rate) {
    PlanItem it;
    it.kind = PlanItem::Kind::bandwidth;
    it.bandwidth = k;
    it.bytes = bytes;
    it.repeats = bw_repeats(quick);
    it.cost_s = (it.repeats.warmup + it.repeats.timed) * (bytes / rate + kLaunch_s);
    it.label = std::string(name(k)) + " " + std::to_string(static_cast<long long>(bytes / 1048576)) + " MiB";
    plan.items.push_back(it);
  };
  for (double b : hbm) {
    add(BandwidthKind::hbm_copy, b, kGuessHbm);
    add(BandwidthKind::hbm_triad, b, kGuessHbm);
  }
  for (double b : pcie) {
    add(BandwidthKind::pcie_h2d, b, kGuessPcie);
    add(BandwidthKind::pcie_d2h, b, kGuessPcie);
  }
}

void add_collectives(bool quick, const DeviceInfo& dev, BenchPlan& plan) {
  for (auto [scope, ranks] : dev.scopes) {
    if (ranks < 2) continue;
    for (int c = 0; c < static_cast<int>(Collective::kCount); ++c)
      for (double b : collective_sizes(quick, dev.device_memory_bytes)) {
        PlanItem it;
        it.kind = PlanItem::Kind::collective;
        it.collective = Collective(c);
        it.scope = scope;
        it.bytes = b;
        it.repeats = coll_repeats(quick);
        it.cost_s = (it.repeats.warmup + it.repeats.timed) * (b * 2 / kGuessBusbw + 2 * kLaunch_s);
        it.label = std::string(name(Collective(c))) + " " + name(scope) + " " +
                   std::to_string(static_cast<long long>(b / 1024)) + " KiB";
        plan.items.push_back(it);
      }
  }
}

// Compute beside a collective, once per scope with at least two ranks: an all-gather (the
// ZeRO-3/FSDP parameter gather) and a reduce-scatter (their gradient reduction), each of
// the largest collective size the plan measures.
void add_overlaps(bool quick, const DeviceInfo& dev, BenchPlan& plan) {
  const std::vector<double> sizes = collective_sizes(quick, dev.device_memory_bytes);
  if (sizes.empty()) return;
  for (auto [scope, ranks] : dev.scopes) {
    if (ranks < 2) continue;
    for (Collective c : {Collective::all_gather, Collective::reduce_scatter}) {
      PlanItem it;
      it.kind = PlanItem::Kind::overlap;
      it.collective = c;
      it.scope = scope;
      it.bytes = sizes.back();
      it.repeats = coll_repeats(quick);
      it.cost_s = 2.0;
      it.label = std::string("GEMM beside ") + name(c) + " " + name(scope);
      plan.items.push_back(it);
    }
  }
}

}  // namespace

BenchPlan make_plan(const BenchOptions& opt, const DeviceInfo& dev) {
  BenchPlan plan;
  const int sms = std::max(1, dev.provenance.sm_count);
  for (int d = 0; d < static_cast<int>(GemmDtype::kCount); ++d)
    add_gemms(gemm_grid(GemmDtype(d), sms, opt.quick), opt.quick, plan);
  if (opt.model) {
    std::vector<int> mbs = opt.micro_batches;
    if (mbs.empty()) mbs = opt.quick ? std::vector<int>{1} : std::vector<int>{1, 2, 4};
    add_gemms(model_gemm_cases(*opt.model, opt.tp, mbs, opt.seq_len, GemmDtype::bf16), opt.quick,
              plan);
  }
  add_bandwidths(opt.quick, plan);
  add_collectives(opt.quick, dev, plan);
  add_overlaps(opt.quick, dev, plan);
  return plan;
}

}  // namespace dsplan
