// Classifying one experiment from its exit status, its metrics file and its logs.
// Rules (docs/confirm.md, "Classification"), in order:
//   cancelled            -> interrupted (rerun on resume)
//   timed out            -> timeout
//   exit 0 + metrics with a positive throughput -> ok (whatever the logs say)
//   an out-of-memory signature in stderr/stdout -> oom
//   could not start, non-zero exit, or a signal -> failed, with the stderr tail
//   exit 0 without usable metrics               -> failed ("no metrics written")
// Log text is never searched for the word "error": only for OOM signatures.
#pragma once

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

// Reads metrics.json text; nullopt when it is not JSON or has no positive "throughput".
std::optional<Measured> parse_metrics(const std::string& text);

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

// `metrics_text` is the content of metrics.json, or nullopt when the file is absent.
Classification classify(const ProcessResult& pr, const std::optional<std::string>& metrics_text,
                        const std::string& stderr_text, const std::string& stdout_text);

// The OOM signature found in `text`, or "".
std::string find_oom_signature(const std::string& text);

// The last `lines` non-empty lines of `text`.
std::string tail_lines(const std::string& text, int lines);

}  // namespace dsplan
