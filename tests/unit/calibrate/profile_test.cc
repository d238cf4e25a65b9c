// Profile save/load round trip, the Efficiency it yields, and diagnostics for bad files.
#include <gtest/gtest.h>

#include "calibrate/profile.h"
#include "synthetic.h"

namespace dsplan {
namespace {

CalibrationProfile fitted() {
  auto p = fit_records(testing::synthetic_records(testing::Truth{}, 3), testing::a100_80gb());
  EXPECT_TRUE(p.ok());
  return *p;
}

std::string text_of(const CalibrationProfile& p) { return profile_to_json(p).dump(1); }

TEST(Profile, RoundTripKeepsEveryField) {
  CalibrationProfile p = fitted();
  auto back = load_profile(text_of(p), "p.json");
  ASSERT_TRUE(back.ok()) << back.errors()[0].to_string();
  EXPECT_EQ(back->source, "p.json");
  EXPECT_EQ(back->datasheet.gpu, "a100-80gb");
  EXPECT_EQ(back->datasheet.sm_count, 108);
  EXPECT_EQ(back->datasheet.peak_TFLOPS, p.datasheet.peak_TFLOPS);
  for (int d = 0; d < 4; ++d)
    EXPECT_EQ(back->fitted.gemm[d]->peak_fraction, p.fitted.gemm[d]->peak_fraction);
  EXPECT_EQ(back->fitted.gemm_k_half, p.fitted.gemm_k_half);
  EXPECT_NEAR(back->fitted.kernel_overhead.v, p.fitted.kernel_overhead.v, 1e-18);
  EXPECT_EQ(back->fitted.hbm_fraction, p.fitted.hbm_fraction);
  EXPECT_EQ(back->fitted.pcie_fraction, p.fitted.pcie_fraction);
  ASSERT_TRUE(p.fitted.overlap_compute_loss);
  EXPECT_EQ(back->fitted.overlap_compute_loss, p.fitted.overlap_compute_loss);
  EXPECT_EQ(back->records.overlap.size(), 2u);
  ASSERT_EQ(back->fitted.collectives.size(), p.fitted.collectives.size());
  EXPECT_NEAR(back->fitted.collectives[0].fit.busbw.v, p.fitted.collectives[0].fit.busbw.v, 1e-3);
  EXPECT_EQ(back->records.gemm.size(), p.records.gemm.size());
  EXPECT_EQ(back->records.provenance.kind, p.records.provenance.kind);
  // Raw records survive bit for bit; fitted values up to the us <-> s conversion.
  EXPECT_EQ(profile_to_json(*back)["records"], profile_to_json(p)["records"]);
  // The whole document differs at most in the last bits of unit-converted numbers.
  const Json a = profile_to_json(p), b = profile_to_json(*back);
  for (const auto& op : Json::diff(a, b)) {
    ASSERT_EQ(op["op"], "replace") << op.dump();
    const Json::json_pointer at(op["path"].get<std::string>());
    ASSERT_TRUE(a.at(at).is_number()) << op.dump();
    EXPECT_NEAR(a.at(at).get<double>(), b.at(at).get<double>(), 1e-12 * std::abs(a.at(at).get<double>()))
        << op.dump();
  }
}

TEST(Profile, ToEfficiencyMapsDtypesToPrecisions) {
  CalibrationProfile p = fitted();
  p.source = "cluster.json";
  Efficiency base;
  base.hbm_fraction = 0.5;
  Efficiency e = to_efficiency(p, base);
  EXPECT_EQ(e.source, "calibration profile cluster.json");
  // Precision enum order is fp32, fp16, bf16; GemmDtype is bf16, fp16, tf32, fp32.
  EXPECT_EQ(e.gemm_peak_fraction[static_cast<int>(Precision::bf16)], p.fitted.gemm[0]->peak_fraction);
  EXPECT_EQ(e.gemm_peak_fraction[static_cast<int>(Precision::fp16)], p.fitted.gemm[1]->peak_fraction);
  EXPECT_EQ(e.gemm_peak_fraction[static_cast<int>(Precision::fp32)], p.fitted.gemm[3]->peak_fraction);
  EXPECT_EQ(e.gemm_k_half, p.fitted.gemm_k_half);
  EXPECT_EQ(e.kernel_overhead.v, p.fitted.kernel_overhead.v);
  EXPECT_EQ(e.hbm_fraction, *p.fitted.hbm_fraction);  // measured value replaces the base
  EXPECT_EQ(e.overlap_compute_loss, *p.fitted.overlap_compute_loss);
  const auto& ar = e.collectives[static_cast<int>(Collective::all_reduce)][static_cast<int>(CommScope::intra_node)];
  ASSERT_TRUE(ar);
  EXPECT_FALSE(e.collectives[0][static_cast<int>(CommScope::inter_node)]);  // not measured
}

// A measured copy rate sets the blended HBM fraction; the stream class (Hopper's
// default 0.89 against the blend's 0.8) keeps its ratio: a copy measured at 0.72 gives
// streams 0.89 x 0.72 / 0.8 = 0.801. A base without classes (stream 0) keeps none.
TEST(Profile, MeasuredCopyRateScalesTheStreamClass) {
  CalibrationProfile p = fitted();
  p.fitted.hbm_fraction = 0.72;
  Efficiency base;
  base.hbm_fraction = 0.8;
  base.stream_hbm_fraction = 0.89;
  const Efficiency e = to_efficiency(p, base);
  EXPECT_DOUBLE_EQ(e.hbm_fraction, 0.72);
  EXPECT_NEAR(e.stream_hbm_fraction, 0.801, 1e-12);
  base.stream_hbm_fraction = 0;
  EXPECT_EQ(to_efficiency(p, base).stream_hbm_fraction, 0.0);
}

TEST(Profile, UnmeasuredFieldsKeepTheBase) {
  CalibrationProfile p = fitted();
  p.fitted.hbm_fraction.reset();
  p.fitted.overlap_compute_loss.reset();
  Efficiency base;
  base.hbm_fraction = 0.5;
  base.overlap_compute_loss = 0.3;
  EXPECT_EQ(to_efficiency(p, base).hbm_fraction, 0.5);
  EXPECT_EQ(to_efficiency(p, base).overlap_compute_loss, 0.3);
}

// A GEMM fit that misses its own measurements by more than 20% RMS, or puts a dtype above
// the datasheet peak, stays in the profile but leaves the base's GEMM fields; the other
// fitted fields still apply.
TEST(Profile, UnusableGemmFitKeepsTheBaseGemm) {
  CalibrationProfile p = fitted();
  ASSERT_TRUE(gemm_fit_usable(p.fitted));
  Efficiency base;
  base.gemm_peak_fraction = {0.5, 0.5, 0.5};
  base.gemm_k_half = 7;
  const auto bf16 = static_cast<int>(Precision::bf16);
  EXPECT_NE(to_efficiency(p, base).gemm_peak_fraction[bf16], 0.5);  // usable: applied
  CalibrationProfile rough = p;
  rough.fitted.gemm_rms_rel_error = 0.21;
  EXPECT_FALSE(gemm_fit_usable(rough.fitted));
  CalibrationProfile above = p;
  above.fitted.gemm[static_cast<int>(GemmDtype::bf16)]->peak_fraction = 1.01;
  EXPECT_FALSE(gemm_fit_usable(above.fitted));
  for (const CalibrationProfile& q : {rough, above}) {
    const Efficiency e = to_efficiency(q, base);
    EXPECT_EQ(e.gemm_peak_fraction[bf16], 0.5);
    EXPECT_EQ(e.gemm_k_half, 7);
    EXPECT_EQ(e.hbm_fraction, *q.fitted.hbm_fraction);  // the rest of the profile applies
  }
}

TEST(Profile, EfficiencyFromFileChecksTheTargetGpu) {
  const std::string text = text_of(fitted());
  auto ok = efficiency_from_profile_file_text(text, "p.json", testing::a100_80gb());
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->source, "calibration profile p.json");
  GpuSpec h100 = testing::a100_80gb();
  h100.name = "h100-sxm";
  h100.sm_count = 132;
  auto bad = efficiency_from_profile_file_text(text, "p.json", h100);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors()[0].file, "p.json");
  EXPECT_NE(bad.errors()[0].message.find("'a100-80gb'"), std::string::npos);
  EXPECT_NE(bad.errors()[0].message.find("'h100-sxm'"), std::string::npos);
}

// Loads `j` (a modified valid profile) and returns its diagnostics.
Diagnostics errors_of(const Json& j) {
  auto p = load_profile(j.dump(), "bad.json");
  return p.ok() ? Diagnostics{} : p.errors();
}

TEST(ProfileErrors, MalformedJson) {
  auto p = load_profile("{\"format\": ", "bad.json");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.errors()[0].file, "bad.json");
  EXPECT_NE(p.errors()[0].message.find("malformed JSON"), std::string::npos);
}

TEST(ProfileErrors, RawRecordsAreNotAProfile) {
  Json j = profile_to_json(fitted());
  j["format"] = "records";
  auto errs = errors_of(j);
  ASSERT_FALSE(errs.empty());
  EXPECT_EQ(errs[0].json_path, "/format");
  EXPECT_NE(errs[0].hint.find("calibrate fit --records"), std::string::npos);
}

TEST(ProfileErrors, MisspeltKeyGetsASuggestion) {
  Json j = profile_to_json(fitted());
  j["fitted"]["gemm_khalf"] = j["fitted"]["gemm_k_half"];
  j["fitted"].erase("gemm_k_half");
  auto errs = errors_of(j);
  ASSERT_EQ(errs.size(), 2u);  // the missing key and the unknown one
  EXPECT_EQ(errs[0].json_path, "/fitted/gemm_k_half");
  EXPECT_EQ(errs[1].json_path, "/fitted/gemm_khalf");
  EXPECT_NE(errs[1].hint.find("did you mean \"gemm_k_half\""), std::string::npos);
}

TEST(ProfileErrors, AllProblemsAreReportedWithTheirPaths) {
  Json j = profile_to_json(fitted());
  j["fitted"]["gemm"]["bf16"]["peak_fraction"] = 3.0;        // out of range
  j["fitted"]["collectives"][0]["scope"] = "intra-node";      // unknown choice
  j["records"]["gemm"][2]["median_us"] = "fast";             // wrong type
  auto errs = errors_of(j);
  ASSERT_EQ(errs.size(), 3u);
  EXPECT_EQ(errs[0].json_path, "/fitted/gemm/bf16/peak_fraction");
  EXPECT_EQ(errs[1].json_path, "/fitted/collectives/0/scope");
  EXPECT_NE(errs[1].hint.find("did you mean \"intra_node\""), std::string::npos);
  EXPECT_EQ(errs[2].json_path, "/records/gemm/2/median_us");
}

TEST(ProfileErrors, FutureVersionIsRefused) {
  Json j = profile_to_json(fitted());
  j["version"] = 2;
  auto errs = errors_of(j);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].json_path, "/version");
}

}  // namespace
}  // namespace dsplan
