// Raw calibration measurements as `dsplan calibrate` records them: GEMM timings, memory
// and PCIe bandwidths and NCCL collective timings, each with the units in its field (and
// JSON key) names, plus the provenance of the run (GPU, driver and library versions, host,
// date, dsplan version). These are plain values: the benchmarks fill them, the fit reads
// them, and records_json.cc is their only (de)serialiser.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/efficiency.h"
#include "core/json_reader.h"

namespace dsplan {

// GEMM data types benchmarked. tf32 = fp32 storage with TF32 tensor-core math;
// fp32 = fp32 storage and math on the fp32 pipe.
enum class GemmDtype : std::uint8_t { bf16, fp16, tf32, fp32, kCount };
// Bandwidth benchmarks: device copy (read+write bytes), STREAM triad a = b + s*c (3 streams),
// pinned host-to-device and device-to-host copies.
enum class BandwidthKind : std::uint8_t { hbm_copy, hbm_triad, pcie_h2d, pcie_d2h, kCount };

const std::vector<std::string>& gemm_dtype_names();
const std::vector<std::string>& bandwidth_kind_names();
const std::vector<std::string>& collective_names();
const std::vector<std::string>& comm_scope_names();
const char* name(GemmDtype);
const char* name(BandwidthKind);
const char* name(Collective);
const char* name(CommScope);

// nccl-tests' bus-bandwidth factor: busbw = algbw * factor (hardware-and-comm.md §2,
// nccl-tests doc/PERFORMANCE.md). all_reduce moves 2(n-1)/n of the buffer over each rank's
// link, all_gather and reduce_scatter (n-1)/n of the whole buffer, broadcast and send/recv
// the buffer once. Inline so the CUDA benchmarks share it without linking the library.
inline double bus_factor(Collective c, int ranks) {
  const double n = ranks;
  switch (c) {
    case Collective::all_reduce: return 2.0 * (n - 1) / n;
    case Collective::reduce_scatter:
    case Collective::all_gather: return (n - 1) / n;
    default: return 1.0;
  }
}

struct Provenance {
  // "measurement", or "synthetic: ..." for generated fixtures (never mistaken for hardware).
  std::string kind = "measurement";
  std::string gpu_name;        // as the driver reports it, e.g. "NVIDIA A100-SXM4-80GB"
  int gpu_count = 0;           // GPUs taking part (all ranks)
  int nodes = 1;
  int sm_count = 0;            // multiprocessors of one GPU, as the driver reports it
  std::string driver;          // driver API version, e.g. "13.0"
  std::string cuda_runtime;
  std::string cublas;
  std::string nccl;
  std::string host;
  std::string date;            // ISO 8601, UTC
  std::string dsplan_version;
  std::string git_hash;
  std::string command;         // the options of the pass, e.g. "--quick --model gpt2"
};

struct GemmRecord {
  std::int64_t m = 0, n = 0, k = 0;  // C[m x n] = A[m x k] * B[k x n]
  GemmDtype dtype = GemmDtype::bf16;
  std::string label;                 // "grid" or e.g. "gpt2 tp=2 mbs=4 qkv fwd"
  double median_us = 0;
  double tflops = 0;                 // 2*m*n*k / median time
  std::optional<double> max_rel_err; // set when this shape was checked against a reference
};

struct BandwidthRecord {
  BandwidthKind kind = BandwidthKind::hbm_copy;
  double bytes = 0;                  // bytes moved per run (copy counts read + write)
  double median_us = 0;
  double GBps = 0;                   // bytes / median time, 1e9 B/s
};

struct CollectiveRecord {
  Collective collective = Collective::all_reduce;
  CommScope scope = CommScope::intra_node;
  int ranks = 0;
  double bytes = 0;                  // nccl-tests message size S
  double time_us = 0;                // median over iterations, slowest rank
  double algbw_GBps = 0;             // S / t
  double busbw_GBps = 0;             // algbw * bus_factor
  std::optional<bool> correct;       // result check, when done
};

// Compute beside a collective (docs/model.md §4.6, "Overlap contention"): one GEMM batch
// timed alone and again while collectives run on another stream of every local GPU, with
// enough of them queued to outlast the batch. Times are the slowest local GPU's medians.
struct OverlapRecord {
  Collective collective = Collective::all_gather;
  CommScope scope = CommScope::intra_node;
  int ranks = 0;
  double bytes = 0;                  // nccl-tests message size S of each collective
  double gemm_alone_us = 0;          // the GEMM batch alone
  double gemm_beside_us = 0;         // the same batch beside the collectives
  double comm_us = 0;                // the queued collectives, first start to last end
  // 1 - alone / beside: the fraction of compute throughput lost. Meaningful only when
  // the collectives outlasted the batch (comm_us >= gemm_beside_us).
  double loss = 0;
};

// Host time eager PyTorch spends to issue one kernel of a training step, measured by
// calibrate/probes/host_dispatch.py: a transformer small enough that the GPU idles between
// kernels, timed over many steps, divided by the kernels one step launches (profiler).
// It is the step-time model's host_op_overhead (docs/model.md §4, "Host dispatch floor").
struct HostDispatchRecord {
  std::string framework;  // e.g. "pytorch 2.11.0+cu130"
  std::string precision;  // "bf16 autocast" or "fp32"
  double step_us = 0;     // wall time of one step, mean over the timed steps
  double kernels_per_step = 0;
  double gpu_busy_us_per_step = 0;  // the kernels' own time: small beside step_us
  double us_per_kernel = 0;         // step_us / kernels_per_step
};

struct RawRecords {
  Provenance provenance;
  std::vector<GemmRecord> gemm;
  std::vector<BandwidthRecord> bandwidth;
  std::vector<CollectiveRecord> collectives;
  std::vector<OverlapRecord> overlap;
  std::optional<HostDispatchRecord> host_dispatch;  // absent where PyTorch could not run
  // Measurements that failed without stopping the pass (the overlap benchmark), one line
  // each; `dsplan calibrate` prints them.
  std::vector<std::string> warnings;
};

// The probe's stdout (one JSON object) as a record; `source` names it in diagnostics.
Expected<HostDispatchRecord> parse_host_dispatch(std::string_view text, const std::string& source);

Json records_to_json(const RawRecords& r);
// Strict read of records_to_json()'s output; `path` is the JSON pointer of the object.
Expected<RawRecords> parse_records(const Json& j, const std::string& file,
                                   const std::string& path = "");

}  // namespace dsplan
