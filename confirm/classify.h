// Classifying one experiment from its exit status, its metrics file and its logs.
// Rules (docs/confirm.md, "Classification"), in order:
//   cancelled            -> interrupted (rerun on resume)
//   timed out            -> timeout
//   exit 0 + metrics with a sane throughput      -> ok (whatever the logs say)
//   exit 0 + metrics whose throughput is absurd  -> failed, with the reason (see
//                                                   measurement_problem)
//   an out-of-memory signature in stderr/stdout -> oom
//   could not start, non-zero exit, or a signal -> failed, with the stderr tail
//   exit 0 without usable metrics               -> failed ("no metrics written")
// Log text is never searched for the word "error": only for OOM signatures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "confirm/process.h"
#include "core/json_reader.h"

namespace dsplan {

enum class Outcome { ok, oom, timeout, failed, interrupted };
const char* outcome_name(Outcome o);
std::optional<Outcome> parse_outcome(const std::string& s);

// What the workload reported in metrics.json (DeepSpeed's autotuning keys).
struct Measured {
  double throughput = 0;      // samples/s
  double latency = 0;         // as written ("latency"; DeepSpeed writes microseconds)
  double flops_per_gpu = 0;   // "FLOPS_per_gpu", FLOP/s
  double peak_memory_gib = -1;  // "peak_memory_GiB" when the workload reports it, else -1
};

// Reads metrics.json text; nullopt when it is not JSON or has no finite "throughput" in
// (0, 1e9) samples/s.
std::optional<Measured> parse_metrics(const std::string& text);

// The physical range of a measured training step, in seconds. A step shorter than a
// microsecond is less than one kernel launch; one longer than a million seconds (11.6 days)
// is not a profiled step of any run confirm could wait for. A throughput that implies a
// step outside it (1e-300 samples/s: 8e300 s for 8 samples) is a broken metrics file, not
// a measurement, and must never reach the residual model.
inline constexpr double kMinMeasuredStepS = 1e-6, kMaxMeasuredStepS = 1e6;

// Why `m` is not a usable measurement of a step of `global_batch` samples (throughput not
// finite, not positive, or a step global_batch / throughput outside [kMinMeasuredStepS,
// kMaxMeasuredStepS]); "" when it is.
// With `peak_samples_per_s` > 0 (the throughput at which the run's model FLOPs would fill
// the GPUs' dense peak: predicted samples/s over predicted MFU), a faster measurement is a
// broken metrics file too.
std::string measurement_problem(const Measured& m, std::int64_t global_batch, double peak_samples_per_s = 0);

struct Classification {
  Outcome outcome = Outcome::failed;
  std::string reason;  // one line: what happened (empty for ok)
  std::string tail;    // last lines of stderr for failures (may be empty)
  // fp16 steps DeepSpeed skipped on a gradient overflow ("... Skipping step ..." log lines)
  // in an ok run. Skipped steps run no optimizer update and no parameter all-gather, so a
  // metric window that contains them measures a shorter step than the prediction prices.
  int overflow_skips = 0;
};

// DeepSpeed's fp16 overflow lines ("OVERFLOW! Rank 0 Skipping step", "Overflow detected.
// Skipping step") in `text`.
int count_overflow_skips(const std::string& text);

// `metrics_text` is the content of metrics.json, or nullopt when the file is absent;
// `global_batch` is the samples one step of the experiment trains (micro-batch x dp x gas).
Classification classify(const ProcessResult& pr, const std::optional<std::string>& metrics_text,
                        const std::string& stderr_text, const std::string& stdout_text,
                        std::int64_t global_batch, double peak_samples_per_s = 0);

// The OOM signature found in `text`, or "".
std::string find_oom_signature(const std::string& text);

// The last `lines` non-empty lines of `text`.
std::string tail_lines(const std::string& text, int lines);

}  // namespace dsplan
