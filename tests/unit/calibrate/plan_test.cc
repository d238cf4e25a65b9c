// The calibration plan: model GEMM shapes, grid shapes around wave boundaries, message
// sizes, and the driver's progress reports and correctness checks (with a fake Bench).
#include <gtest/gtest.h>

#include <algorithm>

#include "calibrate/bench/plan.h"
#include "calibrate/bench/run.h"
#include "synthetic.h"

namespace dsplan {
namespace {

ModelSpec llama8b_like() {
  ModelSpec m;
  m.name = "l8";
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.head_dim = 128;
  m.ffn_hidden = 14336;
  m.gated_mlp = true;
  m.vocab = 128256;
  return m;
}

const GemmCase* find(const std::vector<GemmCase>& v, const std::string& label) {
  auto it = std::find_if(v.begin(), v.end(), [&](const GemmCase& c) { return c.label == label; });
  return it == v.end() ? nullptr : &*it;
}

TEST(ModelGemms, ShapesAtTp2) {
  // TP 2, micro-batch 3, seq 2048: tokens = 6144. QKV out = (32/2 + 2*8/2) * 128 = 3072,
  // proj in = 16*128 = 2048, MLP up out = 2 * 14336/2 = 14336 (gated), down in = 7168,
  // logits out = ceil(128256/2) = 64128.
  auto v = model_gemm_cases(llama8b_like(), {2}, {3}, 2048, GemmDtype::bf16);
  EXPECT_EQ(v.size(), 15u);  // 5 linears x (fwd, dgrad, wgrad), all distinct here
  auto expect = [&](const std::string& l, std::int64_t m, std::int64_t n, std::int64_t k) {
    const GemmCase* c = find(v, "l8 tp=2 mbs=3 " + l);
    ASSERT_NE(c, nullptr) << l;
    EXPECT_EQ(c->m, m) << l;
    EXPECT_EQ(c->n, n) << l;
    EXPECT_EQ(c->k, k) << l;
  };
  expect("qkv fwd", 6144, 3072, 4096);
  expect("qkv dgrad", 6144, 4096, 3072);
  expect("qkv wgrad", 4096, 3072, 6144 /* K = tokens */);
  expect("proj fwd", 6144, 4096, 2048);
  expect("mlp_up fwd", 6144, 14336, 4096);
  expect("mlp_down fwd", 6144, 4096, 7168);
  expect("logits fwd", 6144, 64128, 4096);
}

TEST(ModelGemms, IdenticalShapesAreMeasuredOnce) {
  // tokens = 2048 = proj in: proj wgrad (2048 x 4096 x 2048) equals proj fwd.
  auto v = model_gemm_cases(llama8b_like(), {2}, {1}, 2048, GemmDtype::bf16);
  EXPECT_NE(find(v, "l8 tp=2 mbs=1 proj fwd"), nullptr);
  EXPECT_EQ(find(v, "l8 tp=2 mbs=1 proj wgrad"), nullptr);
}

// Separate Q, K, V and gate, up linears (Hugging Face Llama) at tp 1, 2048 tokens: K and V
// (4096 -> 1024) add their fwd (2048, 1024, 4096), dgrad (2048, 4096, 1024) and wgrad
// (4096, 1024, 2048); Q (4096 -> 4096) has the projection's shapes, nothing new; gate or up
// (4096 -> 14336) adds only its wgrad (4096, 14336, 2048): its fwd (2048, 14336, 4096) is
// mlp_down's dgrad and its dgrad (2048, 4096, 14336) mlp_down's fwd. 4 more. At tp 2 only
// Megatron runs, fused.
TEST(ModelGemms, SeparateProjectionsAddTheirShapesAtTp1) {
  ModelSpec sep = llama8b_like();
  sep.fused_qkv = sep.fused_gate_up = false;
  const auto fused = model_gemm_cases(llama8b_like(), {1}, {1}, 2048, GemmDtype::bf16);
  const auto v = model_gemm_cases(sep, {1}, {1}, 2048, GemmDtype::bf16);
  EXPECT_EQ(v.size(), fused.size() + 4);
  EXPECT_NE(find(v, "l8 tp=1 mbs=1 kv dgrad"), nullptr);
  EXPECT_NE(find(v, "l8 tp=1 mbs=1 mlp_gate_or_up wgrad"), nullptr);
  EXPECT_EQ(find(v, "l8 tp=1 mbs=1 q fwd"), nullptr);
  EXPECT_EQ(model_gemm_cases(sep, {2}, {1}, 2048, GemmDtype::bf16).size(),
            model_gemm_cases(llama8b_like(), {2}, {1}, 2048, GemmDtype::bf16).size());
}

TEST(ModelGemms, SkipsTpThatDoesNotDivideHeadsAndDeduplicates) {
  ModelSpec m = llama8b_like();
  m.heads = 24;  // 24 % 16 != 0
  m.kv_heads = 24;
  auto v = model_gemm_cases(m, {16}, {1}, 1024, GemmDtype::bf16);
  EXPECT_TRUE(v.empty());
  auto w = model_gemm_cases(llama8b_like(), {1, 1}, {1, 1}, 2048, GemmDtype::bf16);
  auto once = model_gemm_cases(llama8b_like(), {1}, {1}, 2048, GemmDtype::bf16);
  EXPECT_EQ(w.size(), once.size());
}

TEST(GemmGrid, StraddlesTheWaveBoundary) {
  // 108 SMs, N = 1024 = 8 tiles of 128: M = 128*13 gives 104 tiles (one wave), M = 128*14
  // gives 112 (two waves); 2*108/8 = 27 -> 216 tiles (two waves), 28 -> 224 (three).
  auto g = gemm_grid(GemmDtype::bf16, 108, false);
  std::vector<std::int64_t> ms;
  for (const auto& c : g)
    if (c.label == "grid wave boundary") ms.push_back(c.m);
  EXPECT_EQ(ms, (std::vector<std::int64_t>{1664, 1792, 3456, 3584}));
  EXPECT_TRUE(g.front().check);
  EXPECT_EQ(g.front().m % 8, 1);  // the checked shape is not tile-aligned
}

TEST(CollectiveSizes, OneKiBToOneGiB) {
  auto s = collective_sizes(false, 0);
  ASSERT_EQ(s.size(), 11u);  // 2^10 .. 2^30 in x4 steps
  EXPECT_EQ(s.front(), 1024);
  EXPECT_EQ(s.back(), 1073741824);
  EXPECT_EQ(collective_sizes(true, 0).size(), 6u);  // x16 steps: 2^10, 2^14, ..., 2^30
  // 16 GiB per GPU: cap 2 GiB keeps 1 GiB; 4 GiB per GPU: cap 512 MiB drops 1 GiB.
  EXPECT_EQ(collective_sizes(false, 4.0 * (1 << 30)).back(), 268435456);
}

TEST(Plan, QuickIsSmallerAndSingleGpuHasNoCollectives) {
  testing::SyntheticBench bench(testing::Truth{}, 1);
  DeviceInfo dev = *bench.probe();
  BenchOptions full, quick;
  quick.quick = true;
  const BenchPlan pf = make_plan(full, dev), pq = make_plan(quick, dev);
  // Full: 25 GEMM shapes x 4 dtypes + 10 bandwidths + 5 x 11 collectives + 2 overlap runs
  // (GEMMs beside all_gather and beside reduce_scatter) = 167; quick: 12 x 4 + 4 + 5 x 6
  // + 2 = 84.
  EXPECT_EQ(pf.items.size(), 167u);
  EXPECT_EQ(pq.items.size(), 84u);
  EXPECT_LT(pq.total_cost_s(), pf.total_cost_s() / 2);
  // The overlap runs use the largest message the plan measures (1 GiB).
  for (const auto& it : pf.items)
    if (it.kind == PlanItem::Kind::overlap) {
      EXPECT_EQ(it.bytes, 1024.0 * 1024 * 1024);
    }
  dev.scopes = {{CommScope::intra_node, 1}};
  for (const auto& it : make_plan(full, dev).items) {
    EXPECT_NE(it.kind, PlanItem::Kind::collective);
    EXPECT_NE(it.kind, PlanItem::Kind::overlap);
  }
}

TEST(RunPlan, ReportsProgressAndProvenance) {
  testing::SyntheticBench bench(testing::Truth{}, 1);
  DeviceInfo dev = *bench.probe();
  BenchOptions opt;
  opt.quick = true;
  const BenchPlan plan = make_plan(opt, dev);
  std::vector<Progress> seen;
  auto r = run_plan(bench, dev, plan, "--quick", [&](const Progress& p) { seen.push_back(p); });
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(seen.size(), plan.items.size() + 1);  // before each item, and once at the end
  EXPECT_EQ(seen.front().done, 0u);
  EXPECT_EQ(seen.back().done, plan.items.size());
  EXPECT_NEAR(seen.back().done_cost, plan.total_cost_s(), 1e-9);
  EXPECT_EQ(seen.back().label, "");
  EXPECT_EQ(r->provenance.dsplan_version, DSPLAN_VERSION);
  EXPECT_EQ(r->provenance.command, "--quick");
  EXPECT_EQ(r->gemm.size() + r->bandwidth.size() + r->collectives.size() + r->overlap.size(),
            plan.items.size());
  EXPECT_TRUE(r->warnings.empty());
}

// A bench whose GEMM check or NCCL check fails.
class FailingBench : public Bench {
 public:
  explicit FailingBench(bool bad_gemm) : bad_gemm_(bad_gemm) {}
  Expected<DeviceInfo> probe() override { return inner_.probe(); }
  Expected<GemmRecord> gemm(const GemmCase& c) override {
    auto r = inner_.gemm(c);
    if (bad_gemm_ && c.check) r.value().max_rel_err = 0.5;
    return r;
  }
  Expected<BandwidthRecord> bandwidth(BandwidthKind k, double b, const Repeats& r) override {
    return inner_.bandwidth(k, b, r);
  }
  Expected<CollectiveRecord> collective(Collective c, CommScope s, double b, const Repeats& r) override {
    auto rec = inner_.collective(c, s, b, r);
    if (!bad_gemm_) rec.value().correct = false;
    return rec;
  }

 private:
  bool bad_gemm_;
  testing::SyntheticBench inner_{testing::Truth{}, 1};
};

// A bench that cannot measure compute beside a collective (Bench's default overlap()).
class NoOverlapBench : public Bench {
 public:
  Expected<DeviceInfo> probe() override { return inner_.probe(); }
  Expected<GemmRecord> gemm(const GemmCase& c) override { return inner_.gemm(c); }
  Expected<BandwidthRecord> bandwidth(BandwidthKind k, double b, const Repeats& r) override {
    return inner_.bandwidth(k, b, r);
  }
  Expected<CollectiveRecord> collective(Collective c, CommScope s, double b, const Repeats& r) override {
    return inner_.collective(c, s, b, r);
  }

 private:
  testing::SyntheticBench inner_{testing::Truth{}, 1};
};

TEST(RunPlan, AFailedOverlapRunIsAWarningNotAnError) {
  NoOverlapBench bench;
  DeviceInfo dev = *bench.probe();
  BenchOptions opt;
  opt.quick = true;
  auto r = run_plan(bench, dev, make_plan(opt, dev), "", nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->overlap.empty());
  ASSERT_EQ(r->warnings.size(), 2u);  // beside all_gather, beside reduce_scatter
  EXPECT_NE(r->warnings[0].find("GEMM beside all_gather intra_node: this benchmark cannot"),
            std::string::npos) << r->warnings[0];
  EXPECT_FALSE(r->collectives.empty());
}

TEST(RunPlan, FailedChecksStopThePass) {
  for (bool bad_gemm : {true, false}) {
    FailingBench bench(bad_gemm);
    DeviceInfo dev = *bench.probe();
    BenchOptions opt;
    opt.quick = true;
    auto r = run_plan(bench, dev, make_plan(opt, dev), "", nullptr);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.errors()[0].message.find(bad_gemm ? "GEMM result check failed" : "NCCL result check failed"),
              std::string::npos) << r.errors()[0].message;
  }
}

}  // namespace
}  // namespace dsplan
