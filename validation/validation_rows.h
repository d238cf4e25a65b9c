// Turning rows of shared/validation/published.json into dsplan requests. Each row names
// a model shape, hardware, a parallel layout and what was measured; this code decides,
// from the row's own text (source, model name, hardware, parallel.other, notes,
// inferred), which dsplan model/hardware/framework stand for it and which predicted
// figure matches the measured one (e.g. nvidia-smi memory -> `device`, Megatron's
// hardware TFLOP/s -> the source's own FLOP formula over predicted step time). It is
// the one canonical mapping (library dsplan_validation): `dsplan validate` and the unit
// tests memory_published_test and time_validation_test use it, and docs/accuracy.md lists
// every decision. A row that cannot be mapped is skipped with a reason, never fatal.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/efficiency.h"
#include "core/json_reader.h"
#include "estimator/search/planner.h"

namespace dsplan::validation {

enum class MeasureKind { memory, step_time, samples_per_s, tflops_per_gpu, max_micro_batch, oom };
// states = params + grads + optimizer: memory_allocated() between iterations.
enum class MemoryFigure { allocated, reserved, device, states };

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
  // Megatron-style hardware FLOPs per sample when the row's TFLOP/s use it; times the
  // predicted configuration's global batch, the FLOPs of one step of the whole job.
  std::optional<double> source_flops_per_sample;
};

// A published nccl-tests bus bandwidth, predicted with the estimator's collective model.
struct CollectiveCase {
  std::string id;
  SystemSpec node;
  Collective collective = Collective::all_reduce;
  double bytes = 0;
  int ranks = 1;
  double measured_GBps = 0;
  std::string measured_algo;        // as published ("ring", "NVLS")
  std::vector<std::string> assumptions;
};

// An ordering row: groups of configurations whose best predicted throughput must come in
// the published order. Pairs whose measured values differ by less than `tie` (relative)
// are ties: either predicted order counts as right.
struct OrderingCase {
  std::string id;
  std::vector<std::string> labels;           // best first, as published
  std::vector<double> measured;              // published values, 0 when only ranked
  std::vector<PlanRequest> groups;           // one request per label (free dims searched)
  double tie = 0;
  std::string note;
};

struct ValidationSet {
  std::vector<ValidationCase> cases;
  std::vector<CollectiveCase> collectives;
  std::vector<OrderingCase> orderings;
  Diagnostics skipped;  // rows that could not be mapped, with why (reported, not fatal)
};

Expected<ValidationSet> load_validation(const Json& rows, const std::string& file);

// Row-text helpers shared by the mapping files (validation_map.cc, validation_orderings.cc).
namespace rows {
bool has(const std::string& s, const std::string& sub);  // case-insensitive
const Json& at(const Json& j, const char* key);           // null Json when absent
double num(const Json& j, const char* key, double fallback = 0);
// num() as an int, clamped to [-1e9, 1e9] first so that an absurd value (1e12 layers)
// reaches the row checks as a large number instead of an undefined cast.
int inum(const Json& j, const char* key, int fallback = 0);
std::string str(const Json& j, const char* key);
// The pinned request of one row (model, hardware, framework, parallel layout); the
// assumptions made are appended to `assumptions`.
Expected<PlanRequest> row_request(const Json& row, std::vector<std::string>& assumptions);
Expected<SystemSpec> system_named(const std::string& name);
// The projection layout of the code a row ran (ModelSpec::fused_qkv, fused_gate_up), where
// its text names that code; a note is appended when it overrides the model's own.
void projection_layout(const Json& row, ModelSpec& spec, std::vector<std::string>& notes);
// RMSNorm's kernels in the code a row ran: dsplan's reference workload runs torch.nn.RMSNorm
// (NormKernel::torch on the PyTorch its rows name, 2.11), unless the row names
// --eager-rmsnorm; every other row keeps auto (fused under Megatron, eager elsewhere).
NormKernel norm_kernel(const Json& row, const ModelSpec& spec, std::vector<std::string>& notes);
// The position scheme (model "position": rotary/RoPE, ALiBi, else learned) and the norm, and
// with it a gated MLP's activation, of a shape-only row's model: the model's "norm" key
// ("rmsnorm" or "layernorm"), else RMSNorm and SiLU for a Llama-family name, else the
// Megatron GPT's LayerNorm, left as it is.
void block_details(const Json& model, ModelSpec& spec, std::vector<std::string>& notes);
// A row's precision ("bf16", "fp16 mixed", "fp32"; "fp8": bf16 with Transformer Engine FP8
// linears, which sets run.fp8 and appends a note, with per-tensor current scaling where the
// row's parallel.other names "current scaling" or "tensorwise").
void precision(const std::string& text, const std::string& other, TrainConfig& run,
               std::vector<std::string>& notes);
// Checks the row's parallel layout and batch fields (`p` = its "parallel" object) and sets
// the request's micro-batch, accumulation or global batch (tp and pp already set): the
// first problem, with its JSON path, or nullopt.
std::optional<Diagnostic> layout_and_batch(const Json& p, int gpus, SearchSpace& s,
                                           std::vector<std::string>& notes);
}  // namespace rows

void add_orderings(const Json& rows, ValidationSet& set);

}  // namespace dsplan::validation
