// The calibration profile file: {format, version, datasheet, fitted, records}. Writing is
// total; reading is strict (unknown keys, wrong types, out-of-range values are reported with
// their JSON pointers) so a hand-edited or truncated profile never silently feeds estimate.
#include "calibrate/profile.h"

namespace dsplan {
namespace {

constexpr const char* kFormat = "dsplan-calibration-profile";
constexpr int kVersion = 1;

Json datasheet_json(const DatasheetSummary& d) {
  Json peaks = Json::object();
  for (int i = 0; i < 4; ++i) peaks[name(GemmDtype(i))] = d.peak_TFLOPS[i];
  return {{"gpu", d.gpu}, {"sm_count", d.sm_count}, {"peak_TFLOPS", peaks},
          {"hbm_GBps", d.hbm_GBps}, {"pcie_GBps", d.pcie_GBps}};
}

Json fitted_json(const FittedParams& f) {
  Json gemm = Json::object();
  for (int i = 0; i < 4; ++i)
    if (f.gemm[i])
      gemm[name(GemmDtype(i))] = {{"peak_fraction", f.gemm[i]->peak_fraction},
                                  {"best_TFLOPS", f.gemm[i]->best_TFLOPS},
                                  {"samples", f.gemm[i]->samples}};
  Json coll = Json::array();
  for (const auto& c : f.collectives)
    coll.push_back({{"collective", name(c.collective)}, {"scope", name(c.scope)},
                    {"ranks", c.ranks}, {"latency_us", in_us(c.fit.latency)},
                    {"busbw_GBps", in_GBps(c.fit.busbw)}, {"samples", c.samples},
                    {"rms_rel_error", c.rms_rel_error}});
  Json j = {{"gemm", gemm}, {"gemm_k_half", f.gemm_k_half},
            {"kernel_overhead_us", in_us(f.kernel_overhead)},
            {"gemm_rms_rel_error", f.gemm_rms_rel_error}, {"hbm_GBps", f.hbm_GBps},
            {"pcie_h2d_GBps", f.pcie_h2d_GBps}, {"pcie_d2h_GBps", f.pcie_d2h_GBps},
            {"collectives", coll}};
  if (f.hbm_fraction) j["hbm_fraction"] = *f.hbm_fraction;
  if (f.pcie_fraction) j["pcie_fraction"] = *f.pcie_fraction;
  if (f.overlap_compute_loss) j["overlap_compute_loss"] = *f.overlap_compute_loss;
  if (f.host_op_overhead) j["host_op_overhead_us"] = in_us(*f.host_op_overhead);
  return j;
}

DatasheetSummary read_datasheet(JsonObjectReader& parent, const std::string& file,
                                Diagnostics& errs) {
  DatasheetSummary d;
  const Json* j = parent.child("datasheet", true);
  if (!j) return d;
  JsonObjectReader r(*j, file, parent.path_of("datasheet"), errs);
  r.get("gpu", d.gpu, true);
  r.get("sm_count", d.sm_count, true, 1, 1 << 16);
  if (const Json* pk = r.child("peak_TFLOPS", true)) {
    JsonObjectReader pr(*pk, file, r.path_of("peak_TFLOPS"), errs);
    for (int i = 0; i < 4; ++i) pr.get(name(GemmDtype(i)), d.peak_TFLOPS[i], false, 0, 1e6);
    pr.finish();
  }
  r.get("hbm_GBps", d.hbm_GBps, true, 0, 1e6);
  r.get("pcie_GBps", d.pcie_GBps, true, 0, 1e6);
  r.finish();
  return d;
}

void read_gemm_fits(JsonObjectReader& parent, const std::string& file, Diagnostics& errs,
                    FittedParams& f) {
  const Json* j = parent.child("gemm", true);
  if (!j) return;
  JsonObjectReader r(*j, file, parent.path_of("gemm"), errs);
  for (int i = 0; i < 4; ++i) {
    const Json* e = r.child(name(GemmDtype(i)), false);
    if (!e) continue;
    GemmDtypeFit g;
    JsonObjectReader er(*e, file, r.path_of(name(GemmDtype(i))), errs);
    bool ok = er.get("peak_fraction", g.peak_fraction, true, 1e-3, 2.0);
    er.get("best_TFLOPS", g.best_TFLOPS, true, 0, 1e6);
    er.get("samples", g.samples, true, 0, 1 << 30);
    er.finish();
    if (ok) f.gemm[i] = g;
  }
  r.finish();
}

void read_collective_fits(JsonObjectReader& parent, const std::string& file, Diagnostics& errs,
                          FittedParams& f) {
  const Json* arr = parent.child("collectives", true);
  if (!arr) return;
  if (!arr->is_array()) {
    errs.push_back({file, parent.path_of("collectives"), "expected an array", ""});
    return;
  }
  for (size_t i = 0; i < arr->size(); ++i) {
    CollectiveFitEntry c;
    JsonObjectReader r((*arr)[i], file, parent.path_of("collectives") + "/" + std::to_string(i),
                       errs);
    int idx = 0;
    if (r.get_choice("collective", idx, true, collective_names())) c.collective = Collective(idx);
    if (r.get_choice("scope", idx, true, comm_scope_names())) c.scope = CommScope(idx);
    r.get("ranks", c.ranks, true, 2, 1 << 20);
    double lat_us = 0, bw = 0;
    r.get("latency_us", lat_us, true, 0, 1e9);
    r.get("busbw_GBps", bw, true, 1e-6, 1e6);
    c.fit = CollectiveFit{us(lat_us), GBps(bw)};
    r.get("samples", c.samples, true, 0, 1 << 30);
    r.get("rms_rel_error", c.rms_rel_error, true, 0, 1e9);
    r.finish();
    f.collectives.push_back(c);
  }
}

FittedParams read_fitted(JsonObjectReader& parent, const std::string& file, Diagnostics& errs) {
  FittedParams f;
  const Json* j = parent.child("fitted", true);
  if (!j) return f;
  JsonObjectReader r(*j, file, parent.path_of("fitted"), errs);
  read_gemm_fits(r, file, errs, f);
  r.get("gemm_k_half", f.gemm_k_half, true, 0, 1e9);
  double ov = 0;
  if (r.get("kernel_overhead_us", ov, true, 0, 1e6)) f.kernel_overhead = us(ov);
  r.get("gemm_rms_rel_error", f.gemm_rms_rel_error, true, 0, 1e9);
  double x = 0;
  if (r.get("hbm_fraction", x, false, 1e-3, 2.0)) f.hbm_fraction = x;
  if (r.get("pcie_fraction", x, false, 1e-3, 2.0)) f.pcie_fraction = x;
  if (r.get("overlap_compute_loss", x, false, 0.0, 0.9)) f.overlap_compute_loss = x;
  if (r.get("host_op_overhead_us", x, false, 1e-3, 1e6)) f.host_op_overhead = us(x);
  r.get("hbm_GBps", f.hbm_GBps, true, 0, 1e6);
  r.get("pcie_h2d_GBps", f.pcie_h2d_GBps, true, 0, 1e6);
  r.get("pcie_d2h_GBps", f.pcie_d2h_GBps, true, 0, 1e6);
  read_collective_fits(r, file, errs, f);
  r.finish();
  return f;
}

}  // namespace

Json profile_to_json(const CalibrationProfile& p) {
  return {{"format", kFormat}, {"version", kVersion}, {"datasheet", datasheet_json(p.datasheet)},
          {"fitted", fitted_json(p.fitted)}, {"records", records_to_json(p.records)}};
}

Expected<CalibrationProfile> load_profile(std::string_view text, const std::string& file) {
  auto parsed = parse_json_text(text, file);
  if (!parsed) return parsed.errors();
  const Json& j = *parsed;
  Diagnostics errs;
  CalibrationProfile p;
  p.source = file;
  JsonObjectReader r(j, file, "", errs);
  if (!r.is_object()) return errs;
  std::string format;
  if (r.get("format", format, true) && format != kFormat)
    r.error("format", "not a dsplan calibration profile (format \"" + format + "\")",
            std::string("expected \"") + kFormat + "\"; raw records are refitted with "
            "'dsplan calibrate fit --records FILE'");
  int version = 0;
  if (r.get("version", version, true, 1, 1 << 20) && version != kVersion)
    r.error("version", "unsupported profile version " + std::to_string(version),
            "this dsplan reads version " + std::to_string(kVersion));
  p.datasheet = read_datasheet(r, file, errs);
  p.fitted = read_fitted(r, file, errs);
  if (const Json* rec = r.child("records", true)) {
    auto recs = parse_records(*rec, file, "/records");
    if (recs) p.records = std::move(recs).value();
    else errs.insert(errs.end(), recs.errors().begin(), recs.errors().end());
  }
  r.finish();
  if (!errs.empty()) return errs;
  return p;
}

}  // namespace dsplan
