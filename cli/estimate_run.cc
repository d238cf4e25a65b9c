// Running `dsplan estimate`: parse the flags (estimate_options.cc), search and rank the space,
// build the plan's JSON (estimate_json.cc) and apply a residual model learned by `confirm`
// when one is named or sits beside the calibration profile. File reads only; no printing.
#include <chrono>
#include <filesystem>

#include "cli/estimate_options.h"
#include "confirm/residual_model.h"
#include "core/json_reader.h"

namespace dsplan::cli {

Expected<EstimatePlan> run_estimate(const EstimateOptions& o) {
  auto prepared = prepare_estimate(o);
  if (!prepared) return prepared.errors();
  EstimatePlan p = std::move(prepared).value();
  p.request.refine = make_refiner(p.request);
  auto t0 = std::chrono::steady_clock::now();
  p.result = plan(p.request);
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  p.json = plan_to_json(p);
  // A residual model learned by `confirm` lives beside the calibration profile
  // (PROFILE minus .json + ".residual.json") or is named with --residual.
  std::string residual = o.residual;
  if (residual.empty() && !o.profile.empty()) {
    std::string stem = o.profile;
    if (stem.size() > 5 && stem.substr(stem.size() - 5) == ".json") stem.resize(stem.size() - 5);
    std::error_code ec;
    if (std::filesystem::exists(stem + ".residual.json", ec)) residual = stem + ".residual.json";
  }
  if (!residual.empty()) {
    if (auto readable = read_text_file(residual); !readable) return readable.errors();
    auto applied = apply_residual_model(residual, p.request.model, p.json["configs"], true,
                                        cluster_key_of(p.json["hardware"]));
    if (!applied) {
      Diagnostics errs = applied.errors();
      for (auto& e : errs)
        if (e.hint.empty()) e.hint = "--residual takes the .residual.json that 'dsplan confirm' writes";
      return errs;
    }
    const std::string note = "residual model " + residual + " applied (trained on " +
                             std::to_string(applied->training_runs) + " confirmed runs on " +
                             applied->cluster +
                             "): configs carry residual.samples_per_s and are re-ranked by it";
    p.assumptions.push_back(note);
    p.json["assumptions"].push_back(note);
  }
  return p;
}

}  // namespace dsplan::cli
