// Turning rows of shared/validation/published.json into dsplan requests. Each row names
// a model shape, hardware, a parallel layout and what was measured; this file decides,
// per source, which dsplan model/hardware/framework stand for it and which predicted
// figure matches the measured one (e.g. nvidia-smi memory -> `device`, Megatron's
// hardware TFLOP/s -> the source's own FLOP formula over predicted step time). Every
// such decision is listed in docs/accuracy.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/json_reader.h"
#include "estimator/search/planner.h"

namespace dsplan::cli {

enum class MeasureKind { memory, step_time, samples_per_s, tflops_per_gpu, max_micro_batch, oom };
enum class MemoryFigure { allocated, reserved, device };

struct Measurement {
  MeasureKind kind;
  double value = 0;                 // MiB, seconds, samples/s, TFLOP/s, or micro-batch
  MemoryFigure figure = MemoryFigure::device;
  std::string label;                // the row's key, e.g. "peak_mem_MiB"
};

struct ValidationCase {
  std::string id;
  std::string source;
  PlanRequest request;              // space pinned to the row's configuration
  std::vector<Measurement> measured;
  bool inconsistent = false;        // the row says it is inconsistent as published
  std::vector<std::string> assumptions;
  // Megatron-style hardware FLOPs per step (whole job) when the row's TFLOP/s use it.
  std::optional<double> source_flops_per_step;
};

// An ordering row: groups of configurations whose best predicted throughput must come in
// the published order.
struct OrderingCase {
  std::string id;
  std::vector<std::string> labels;           // best first, as published
  std::vector<PlanRequest> groups;           // one request per label (free dims searched)
};

struct ValidationSet {
  std::vector<ValidationCase> cases;
  std::vector<OrderingCase> orderings;
  Diagnostics skipped;  // rows that could not be mapped, with why (reported, not fatal)
};

Expected<ValidationSet> load_validation(const Json& rows, const std::string& file);

}  // namespace dsplan::cli
