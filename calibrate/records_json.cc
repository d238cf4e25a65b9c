// JSON form of the raw calibration records (records.h). Keys carry their units
// (median_us, GBps, busbw_GBps); the reader is strict: unknown keys, wrong types and
// out-of-range values are all reported with their JSON pointer.
#include "calibrate/records.h"

namespace dsplan {
namespace {

constexpr double kMaxBytes = 1e15;
constexpr double kMaxTime_us = 1e12;
constexpr std::int64_t kMaxDim = std::int64_t{1} << 31;

template <class E>
bool read_enum(JsonObjectReader& r, std::string_view key, const std::vector<std::string>& names,
               E& out) {
  int idx = 0;
  if (!r.get_choice(key, idx, true, names)) return false;
  out = static_cast<E>(idx);
  return true;
}

// Calls `read(element, element_path)` for each element of the array at `key`.
template <class F>
void for_each_element(JsonObjectReader& r, std::string_view key, const std::string& file,
                      Diagnostics& errs, F read) {
  const Json* arr = r.child(key, false);
  if (!arr) return;
  if (!arr->is_array()) {
    errs.push_back({file, r.path_of(key), "expected an array", ""});
    return;
  }
  for (size_t i = 0; i < arr->size(); ++i) read((*arr)[i], r.path_of(key) + "/" + std::to_string(i));
}

Provenance read_provenance(const Json& j, const std::string& file, const std::string& path,
                           Diagnostics& errs) {
  Provenance p;
  JsonObjectReader r(j, file, path, errs);
  r.get("kind", p.kind, true);
  r.get("gpu_name", p.gpu_name, true);
  r.get("gpu_count", p.gpu_count, true, 1, 1 << 20);
  r.get("nodes", p.nodes, false, 1, 1 << 16);
  r.get("sm_count", p.sm_count, true, 1, 1 << 16);
  for (auto [key, out] : {std::pair{"driver", &p.driver}, {"cuda_runtime", &p.cuda_runtime},
                          {"cublas", &p.cublas}, {"nccl", &p.nccl}, {"host", &p.host},
                          {"date", &p.date}, {"dsplan_version", &p.dsplan_version},
                          {"git_hash", &p.git_hash}, {"command", &p.command}})
    r.get(key, *out, false);
  r.finish();
  return p;
}

GemmRecord read_gemm(const Json& j, const std::string& file, const std::string& path,
                     Diagnostics& errs) {
  GemmRecord g;
  JsonObjectReader r(j, file, path, errs);
  r.get("m", g.m, true, 1, kMaxDim);
  r.get("n", g.n, true, 1, kMaxDim);
  r.get("k", g.k, true, 1, kMaxDim);
  read_enum(r, "dtype", gemm_dtype_names(), g.dtype);
  r.get("label", g.label, false);
  r.get("median_us", g.median_us, true, 1e-3, kMaxTime_us);
  r.get("tflops", g.tflops, true, 0, 1e6);
  double err = 0;
  if (r.get("max_rel_err", err, false, 0, 1e30)) g.max_rel_err = err;
  r.finish();
  return g;
}

BandwidthRecord read_bandwidth(const Json& j, const std::string& file, const std::string& path,
                               Diagnostics& errs) {
  BandwidthRecord b;
  JsonObjectReader r(j, file, path, errs);
  read_enum(r, "kind", bandwidth_kind_names(), b.kind);
  r.get("bytes", b.bytes, true, 1, kMaxBytes);
  r.get("median_us", b.median_us, true, 1e-3, kMaxTime_us);
  r.get("GBps", b.GBps, true, 0, 1e6);
  r.finish();
  return b;
}

// The keys that name a collective run: which collective, where, over how many ranks, and
// its nccl-tests message size. Collective and overlap records share them.
template <class Rec>
void read_collective_id(JsonObjectReader& r, Rec& out) {
  read_enum(r, "collective", collective_names(), out.collective);
  read_enum(r, "scope", comm_scope_names(), out.scope);
  r.get("ranks", out.ranks, true, 2, 1 << 20);
  r.get("bytes", out.bytes, true, 1, kMaxBytes);
}

CollectiveRecord read_collective(const Json& j, const std::string& file,
                                 const std::string& path, Diagnostics& errs) {
  CollectiveRecord c;
  JsonObjectReader r(j, file, path, errs);
  read_collective_id(r, c);
  r.get("time_us", c.time_us, true, 1e-3, kMaxTime_us);
  r.get("algbw_GBps", c.algbw_GBps, true, 0, 1e6);
  r.get("busbw_GBps", c.busbw_GBps, true, 0, 1e6);
  bool ok = false;
  if (r.get("correct", ok, false)) c.correct = ok;
  r.finish();
  return c;
}

OverlapRecord read_overlap(const Json& j, const std::string& file, const std::string& path,
                           Diagnostics& errs) {
  OverlapRecord o;
  JsonObjectReader r(j, file, path, errs);
  read_collective_id(r, o);
  r.get("gemm_alone_us", o.gemm_alone_us, true, 1e-3, kMaxTime_us);
  r.get("gemm_beside_us", o.gemm_beside_us, true, 1e-3, kMaxTime_us);
  r.get("comm_us", o.comm_us, true, 1e-3, kMaxTime_us);
  r.get("loss", o.loss, true, -1.0, 1.0);
  r.finish();
  return o;
}

HostDispatchRecord read_host_dispatch(const Json& j, const std::string& file, const std::string& path,
                                      Diagnostics& errs) {
  HostDispatchRecord h;
  JsonObjectReader r(j, file, path, errs);
  r.get("framework", h.framework, true);
  r.get("precision", h.precision, true);
  r.get("step_us", h.step_us, true, 1e-3, kMaxTime_us);
  r.get("kernels_per_step", h.kernels_per_step, true, 1.0, 1e9);
  r.get("gpu_busy_us_per_step", h.gpu_busy_us_per_step, true, 0.0, kMaxTime_us);
  r.get("us_per_kernel", h.us_per_kernel, true, 1e-3, 1e6);
  r.finish();
  return h;
}

Json host_dispatch_json(const HostDispatchRecord& h) {
  return {{"framework", h.framework},
          {"precision", h.precision},
          {"step_us", h.step_us},
          {"kernels_per_step", h.kernels_per_step},
          {"gpu_busy_us_per_step", h.gpu_busy_us_per_step},
          {"us_per_kernel", h.us_per_kernel}};
}

}  // namespace

Expected<HostDispatchRecord> parse_host_dispatch(std::string_view text, const std::string& source) {
  auto j = parse_json_text(text, source);
  if (!j) return j.errors();
  Diagnostics errs;
  HostDispatchRecord h = read_host_dispatch(*j, source, "", errs);
  if (!errs.empty()) return errs;
  return h;
}

Json records_to_json(const RawRecords& r) {
  const Provenance& p = r.provenance;
  Json prov = {{"kind", p.kind},       {"gpu_name", p.gpu_name}, {"gpu_count", p.gpu_count},
               {"nodes", p.nodes},     {"sm_count", p.sm_count}, {"driver", p.driver},
               {"cuda_runtime", p.cuda_runtime}, {"cublas", p.cublas}, {"nccl", p.nccl},
               {"host", p.host},       {"date", p.date}, {"dsplan_version", p.dsplan_version},
               {"git_hash", p.git_hash}, {"command", p.command}};
  Json gemm = Json::array();
  for (const auto& g : r.gemm) {
    Json e = {{"m", g.m}, {"n", g.n}, {"k", g.k}, {"dtype", name(g.dtype)}, {"label", g.label},
              {"median_us", g.median_us}, {"tflops", g.tflops}};
    if (g.max_rel_err) e["max_rel_err"] = *g.max_rel_err;
    gemm.push_back(std::move(e));
  }
  Json bw = Json::array();
  for (const auto& b : r.bandwidth)
    bw.push_back({{"kind", name(b.kind)}, {"bytes", b.bytes}, {"median_us", b.median_us},
                  {"GBps", b.GBps}});
  Json coll = Json::array();
  for (const auto& c : r.collectives) {
    Json e = {{"collective", name(c.collective)}, {"scope", name(c.scope)}, {"ranks", c.ranks},
              {"bytes", c.bytes}, {"time_us", c.time_us}, {"algbw_GBps", c.algbw_GBps},
              {"busbw_GBps", c.busbw_GBps}};
    if (c.correct) e["correct"] = *c.correct;
    coll.push_back(std::move(e));
  }
  Json out = {{"provenance", prov}, {"gemm", gemm}, {"bandwidth", bw}, {"collectives", coll}};
  if (!r.overlap.empty()) {
    Json ov = Json::array();
    for (const auto& o : r.overlap)
      ov.push_back({{"collective", name(o.collective)}, {"scope", name(o.scope)},
                    {"ranks", o.ranks}, {"bytes", o.bytes}, {"gemm_alone_us", o.gemm_alone_us},
                    {"gemm_beside_us", o.gemm_beside_us}, {"comm_us", o.comm_us},
                    {"loss", o.loss}});
    out["overlap"] = ov;
  }
  if (r.host_dispatch) out["host_dispatch"] = host_dispatch_json(*r.host_dispatch);
  if (!r.warnings.empty()) out["warnings"] = r.warnings;
  return out;
}

Expected<RawRecords> parse_records(const Json& j, const std::string& file,
                                   const std::string& path) {
  Diagnostics errs;
  RawRecords out;
  JsonObjectReader r(j, file, path, errs);
  if (const Json* p = r.child("provenance", true))
    out.provenance = read_provenance(*p, file, r.path_of("provenance"), errs);
  for_each_element(r, "gemm", file, errs, [&](const Json& e, const std::string& at) {
    out.gemm.push_back(read_gemm(e, file, at, errs));
  });
  for_each_element(r, "bandwidth", file, errs, [&](const Json& e, const std::string& at) {
    out.bandwidth.push_back(read_bandwidth(e, file, at, errs));
  });
  for_each_element(r, "collectives", file, errs, [&](const Json& e, const std::string& at) {
    out.collectives.push_back(read_collective(e, file, at, errs));
  });
  for_each_element(r, "overlap", file, errs, [&](const Json& e, const std::string& at) {
    out.overlap.push_back(read_overlap(e, file, at, errs));
  });
  if (const Json* h = r.child("host_dispatch", false))
    out.host_dispatch = read_host_dispatch(*h, file, r.path_of("host_dispatch"), errs);
  for_each_element(r, "warnings", file, errs, [&](const Json& e, const std::string& at) {
    if (e.is_string()) out.warnings.push_back(e.get<std::string>());
    else errs.push_back({file, at, "expected a string", ""});
  });
  r.finish();
  if (!errs.empty()) return errs;
  return out;
}

}  // namespace dsplan
