// The regime of a predicted configuration and the band quoted for it
// (estimator/search/evidence.h). The bands themselves are checked against the validation
// rows by ctest cli.validate_evidence_bands; here, the classification.
#include "estimator/search/evidence.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace dsplan {
namespace {

Evaluation evaluated(Framework f, int pp, double step_s, double host_stall_s, double host_issue_s) {
  Evaluation e;
  e.cfg.framework = f;
  e.cfg.pp = pp;
  e.time.step = Seconds(step_s);
  e.time.host_stall = Seconds(host_stall_s);
  e.time.host_issue = Seconds(host_issue_s);
  return e;
}

TEST(Evidence, RegimeNamesTheGpuFrameworkAndPipeline) {
  EXPECT_EQ(regime_name(evidence_regime(evaluated(Framework::megatron, 8, 1.0, 0, 0.01), GpuArch::hopper)),
            "hopper megatron pipeline");
  EXPECT_EQ(regime_name(evidence_regime(evaluated(Framework::fsdp, 1, 1.0, 0, 0.01), GpuArch::ampere)),
            "ampere fsdp");
  EXPECT_EQ(regime_name(evidence_regime(evaluated(Framework::deepspeed, 2, 1.0, 0, 0.01), GpuArch::volta)),
            "volta deepspeed pipeline");
  // ZeRO-Offload plans lean on the host's optimizer step and PCIe copies: a regime of their own.
  Evaluation offloaded = evaluated(Framework::deepspeed, 1, 1.0, 0, 0.01);
  offloaded.cfg.offload = Offload::optimizer;
  EXPECT_EQ(regime_name(evidence_regime(offloaded, GpuArch::volta)), "volta deepspeed offload");
  offloaded.cfg.offload = Offload::all;
  offloaded.cfg.pp = 2;
  EXPECT_EQ(regime_name(evidence_regime(offloaded, GpuArch::ampere)), "ampere deepspeed offload pipeline");
}

// From 16,384 tokens a sequence (the global one, whatever the context parallelism) the
// attention leads the step and its kernels run beyond the curves they were priced from: a
// step regime of its own; memory keeps the plain regime.
TEST(Evidence, LongSequencesFrom16kTokens) {
  Evaluation e = evaluated(Framework::megatron, 1, 1.0, 0, 0.01);
  e.cfg.seq_len = 16383;
  EXPECT_EQ(regime_name(evidence_regime(e, GpuArch::hopper)), "hopper megatron");
  e.cfg.seq_len = 16384;
  e.cfg.cp = 4;
  EXPECT_EQ(regime_name(evidence_regime(e, GpuArch::hopper)), "hopper megatron long-sequence");
  EXPECT_EQ(regime_name(evidence_regime(e, GpuArch::hopper), EvidenceKind::memory), "hopper megatron");
  e.cfg.pp = 4;
  e.cfg.offload = Offload::optimizer;
  EXPECT_EQ(regime_name(evidence_regime(e, GpuArch::ampere)),
            "ampere megatron offload pipeline long-sequence");
}

TEST(Evidence, HostSensitiveFromAQuarterOfTheGpuWork) {
  // GPU work = step - host stall = 0.100 - 0.020 = 0.080 s; a quarter of it is 0.020 s.
  EXPECT_TRUE(
      evidence_regime(evaluated(Framework::ddp, 1, 0.100, 0.020, 0.020), GpuArch::hopper).host_sensitive);
  EXPECT_FALSE(
      evidence_regime(evaluated(Framework::ddp, 1, 0.100, 0.020, 0.0199), GpuArch::hopper).host_sensitive);
  // A host-bound step (stall 0.060 of 0.100: GPU work 0.040) is host-sensitive whatever else.
  EXPECT_EQ(regime_name(evidence_regime(evaluated(Framework::ddp, 1, 0.100, 0.060, 0.100), GpuArch::hopper)),
            "hopper ddp host-sensitive");
  // No step (a configuration without a time) is never host-sensitive.
  EXPECT_FALSE(evidence_regime(evaluated(Framework::ddp, 1, 0, 0, 0.01), GpuArch::hopper).host_sensitive);
}

TEST(Evidence, BandsAreUniqueWellFormedAndFoundByRegime) {
  std::set<std::string> names;
  for (const EvidenceBand& b : evidence_bands()) {
    EXPECT_TRUE(names.insert(b.regime).second) << b.regime << " listed twice";
    EXPECT_GT(b.runs, 0) << b.regime;
    EXPECT_LE(b.low, b.high) << b.regime;
    EXPECT_GT(b.low, 0) << b.regime;
    // The middle 80% lies inside the whole range (each rounded to 0.01).
    EXPECT_LE(b.low, b.p10 + 0.005) << b.regime;
    EXPECT_LE(b.p10, b.p90) << b.regime;
    EXPECT_LE(b.p90, b.high + 0.005) << b.regime;
    EXPECT_GE(b.median_abs_error, 0) << b.regime;
    // The median deviation cannot exceed the larger distance of the range from 1.
    EXPECT_LE(b.median_abs_error, std::max(1 - b.low, b.high - 1) + 0.005) << b.regime;
  }
  const auto megatron =
      evidence_band(evidence_regime(evaluated(Framework::megatron, 4, 1, 0, 0), GpuArch::hopper));
  ASSERT_TRUE(megatron.has_value());
  EXPECT_STREQ(megatron->regime, "hopper megatron pipeline");
  // Nothing of this kind was checked: no band, rather than a borrowed one.
  EXPECT_FALSE(
      evidence_band(evidence_regime(evaluated(Framework::fsdp, 1, 1, 0, 0), GpuArch::volta)).has_value());
}

// A band from its runs' measured / predicted ratios. For 1.3, 0.9, 1.1, 1.0: sorted
// 0.9, 1.0, 1.1, 1.3; |ratio - 1| sorted 0, 0.1, 0.1, 0.3, median (0.1 + 0.1) / 2 = 0.1;
// the 10th percentile at rank 0.1 x 3 = 0.3: 0.9 + 0.3 x 0.1 = 0.93; the 90th at rank 2.7:
// 1.1 + 0.7 x 0.2 = 1.24.
TEST(Evidence, ABandIsItsRunsMedianRangeAndMiddleEightyPercent) {
  const EvidenceBand b = evidence_band_of({1.3, 0.9, 1.1, 1.0});
  EXPECT_EQ(b.runs, 4);
  EXPECT_NEAR(b.median_abs_error, 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(b.low, 0.9);
  EXPECT_DOUBLE_EQ(b.high, 1.3);
  EXPECT_NEAR(b.p10, 0.93, 1e-12);
  EXPECT_NEAR(b.p90, 1.24, 1e-12);
  EXPECT_EQ(evidence_band_of({}).runs, 0);
  // Agreement is to the table's rounding: ratios to 0.01, the median to 0.001.
  EvidenceBand rounded = b;
  rounded.p90 = 1.244;
  rounded.median_abs_error = 0.1005;
  EXPECT_TRUE(same_band(b, rounded));
  rounded.p90 = 1.25;
  EXPECT_FALSE(same_band(b, rounded));
  rounded = b;
  rounded.runs = 5;
  EXPECT_FALSE(same_band(b, rounded));
}

// Peak memory has its own bands, by the same regime without the host: issuing kernels moves no
// memory, so a host-sensitive plan takes the band of its GPU and framework.
TEST(Evidence, MemoryBandsIgnoreTheHost) {
  const EvidenceRegime host_bound =
      evidence_regime(evaluated(Framework::ddp, 1, 0.100, 0.060, 0.100), GpuArch::hopper);
  EXPECT_EQ(regime_name(host_bound, EvidenceKind::memory), "hopper ddp");
  const auto memory = evidence_band(host_bound, EvidenceKind::memory);
  ASSERT_TRUE(memory.has_value());
  EXPECT_STREQ(memory->regime, "hopper ddp");
  // The step band of the same plan is the host-sensitive one.
  ASSERT_TRUE(evidence_band(host_bound).has_value());
  EXPECT_STREQ(evidence_band(host_bound)->regime, "hopper ddp host-sensitive");
  for (const EvidenceBand& b : evidence_bands(EvidenceKind::memory)) {
    EXPECT_EQ(std::string(b.regime).find("host-sensitive"), std::string::npos) << b.regime;
    EXPECT_LE(b.low, b.high) << b.regime;
  }
}

}  // namespace
}  // namespace dsplan
