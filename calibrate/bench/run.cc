// run_plan(): executes plan items on a Bench in order and checks their correctness flags.
#include "calibrate/bench/run.h"

#include <sstream>

namespace dsplan {

double gemm_check_tolerance(GemmDtype d) {
  // Output rounding dominates: bf16 keeps 8 significant bits (2^-8 ~ 0.4%), fp16 and TF32
  // inputs 11 bits; fp32 differs from the reference only by summation order.
  switch (d) {
    case GemmDtype::bf16: return 2e-2;
    case GemmDtype::fp16: return 5e-3;
    case GemmDtype::tf32: return 5e-3;
    default: return 1e-4;
  }
}

namespace {

Diagnostics check_gemm(const GemmCase& c, const GemmRecord& r) {
  if (!c.check) return {};
  if (!r.max_rel_err)
    return {{"", "", std::string("GEMM check for ") + name(c.dtype) + " returned no error figure", ""}};
  if (*r.max_rel_err <= gemm_check_tolerance(c.dtype)) return {};
  std::ostringstream s;
  s << "GEMM result check failed for " << name(c.dtype) << " " << c.m << "x" << c.n << "x" << c.k
    << ": normalised error " << *r.max_rel_err << " > " << gemm_check_tolerance(c.dtype);
  return {{"", "", s.str(), "the cuBLAS result disagrees with the reference kernel"}};
}

Diagnostics run_item(Bench& bench, const PlanItem& it, RawRecords& out) {
  switch (it.kind) {
    case PlanItem::Kind::gemm: {
      auto r = bench.gemm(it.gemm);
      if (!r) return r.errors();
      Diagnostics bad = check_gemm(it.gemm, *r);
      if (!bad.empty()) return bad;
      out.gemm.push_back(*r);
      return {};
    }
    case PlanItem::Kind::bandwidth: {
      auto r = bench.bandwidth(it.bandwidth, it.bytes, it.repeats);
      if (!r) return r.errors();
      out.bandwidth.push_back(*r);
      return {};
    }
    case PlanItem::Kind::collective: {
      auto r = bench.collective(it.collective, it.scope, it.bytes, it.repeats);
      if (!r) return r.errors();
      if (r->correct && !*r->correct)
        return {{"", "", "NCCL result check failed",
                 "the collective's output differs from the expected values"}};
      out.collectives.push_back(*r);
      return {};
    }
    case PlanItem::Kind::overlap: {
      // Not fatal: the other measurements stand without it, and the model keeps its
      // default overlap_compute_loss.
      auto r = bench.overlap(it.collective, it.scope, it.bytes, it.repeats);
      if (!r) {
        out.warnings.push_back(it.label + ": " + r.errors().front().message);
        return {};
      }
      out.overlap.push_back(*r);
      return {};
    }
  }
  return {};
}

}  // namespace

Expected<RawRecords> run_plan(Bench& bench, const DeviceInfo& dev, const BenchPlan& plan,
                              const std::string& command, const ProgressFn& progress) {
  RawRecords out;
  out.provenance = dev.provenance;
  out.provenance.dsplan_version = DSPLAN_VERSION;
  out.provenance.git_hash = DSPLAN_GIT_HASH;
  out.provenance.command = command;
  Progress p{0, plan.items.size(), 0, plan.total_cost_s(), ""};
  for (const auto& it : plan.items) {
    p.label = it.label;
    if (progress) progress(p);
    Diagnostics errs = run_item(bench, it, out);
    if (!errs.empty()) {
      for (auto& e : errs) e.message = it.label + ": " + e.message;
      return errs;
    }
    ++p.done;
    p.done_cost += it.cost_s;
  }
  p.label.clear();
  if (progress) progress(p);
  return out;
}

}  // namespace dsplan
