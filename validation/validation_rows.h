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

enum class MeasureKind {
  memory,
  step_time,
  samples_per_s,
  tokens_per_s,
  tflops_per_gpu,
  max_micro_batch,
  oom
};
// states = params + grads + optimizer: memory_allocated() between iterations.
enum class MemoryFigure { allocated, reserved, device, states };

struct Measurement {
  MeasureKind kind;
  double value = 0;                 // MiB, seconds, samples/s, TFLOP/s, or micro-batch
  MemoryFigure figure = MemoryFigure::device;
  std::string label;                // the row's key, e.g. "peak_mem_MiB"
  bool per_gpu = false;             // tokens_per_s: per GPU rather than for the job
};

// How a row's TFLOP/s count FLOPs (validation_measures.cc): a formula (source_flops_per_sample:
// the source's own, 6N, or PaLM's and Megatron's model FLOPs when none is named), or
// dsplan's hardware FLOPs (with recompute).
enum class FlopConvention { source_formula, hardware };

struct ValidationCase {
  std::string id;
  std::string source;
  PlanRequest request;              // space pinned to the row's configuration
  std::vector<Measurement> measured;
  bool inconsistent = false;        // the row says it is inconsistent as published
  // The source names the GPU (hardware.gpu says neither "not stated" nor "inferred"): only
  // then is the row evidence for a regime (estimator/search/evidence.h).
  bool gpu_stated = true;
  std::vector<std::string> assumptions;
  // FLOPs per sample under the row's formula; times the predicted configuration's global
  // batch, the FLOPs of one step of the whole job.
  std::optional<double> source_flops_per_sample;
  FlopConvention flops = FlopConvention::source_formula;
  std::string flops_note;  // the convention taken, for the report
  // Runs that compete for the same hardware: the row's source, model name, sequence and GPU
  // count (step_group: and global batch, for step times). Pairs of a group measured by the
  // same key are checked for their order (dsplan validate).
  std::string group, step_group;
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

// `doc`: a list of rows, or an object holding the list under "rows".
Expected<ValidationSet> load_validation(const Json& doc, const std::string& file);

// The predicted figure of a time or throughput measurement (step_time, samples_per_s,
// tokens_per_s, tflops_per_gpu) from the row's best evaluation; 0 for other kinds.
double predicted_throughput(const ValidationCase& c, const Measurement& m, const Evaluation& e);
// The predicted memory figure (MiB) a measurement compares with, and its name.
double predicted_memory(const MemoryBreakdown& m, MemoryFigure f);
const char* memory_figure_name(MemoryFigure f);

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
// The row's id, and the counts and measured figures it states, of the right type and range
// (validation_fields.cc): the first problem, or none.
std::optional<Diagnostic> field_problem(const Json& row);
Expected<SystemSpec> system_named(const std::string& name);
std::string joined(const Json& j);  // a string, or an array's strings joined with "; "
// The hardware a row's "hardware" object names (validation_hardware.cc): a system or GPU
// preset, the GPU that replaces the system's, the node size and NICs the row implies.
struct RowHw {
  std::string system;
  std::optional<std::string> gpu;  // replaces the system's GPU
  int gpus_per_node = 0;           // 0 = the system's
  std::string why;
  // A GPU variant the row names by its own figures (memory, HBM bandwidth); 0 = the preset's.
  Bytes memory{0};
  BytesPerSecond hbm{0};
  int nics_per_node = 0;  // 0 = the system's
  SystemSpec preset{};    // the resolved `system` preset (row_system starts from it)
};
// The row with its keys under the names of published.json's format where it gives them
// under other tools' names (num_hidden_layers, tensor_model_parallel_size, ...;
// validation_keys.cc).
Json canonical_row(const Json& row);
Expected<RowHw> row_hardware(const Json& row);
// The row's GPU count: hardware.num_gpus, else parallel dp x tp x pp (x cp), else a "<n>x"
// at the start of the GPU text times hardware.nodes, else 1; `why` (when given) says which
// when num_gpus was not given.
double gpu_count(const Json& row, std::string* why);
// The SystemSpec of row_hardware with the row's stated NICs applied; the notes say how.
Expected<SystemSpec> row_system(const Json& row, std::vector<std::string>& notes);
// Per-node NICs the row's interconnect text states as "<count>x <name> <rate> Gb/s"
// (e.g. "8x200Gb/s HDR IB per node", "4x Omni-Path 100 Gb/s per node"); nothing when the
// text gives no rate (then the system preset's NICs stand).
std::optional<std::pair<int, double>> stated_nics(const std::string& ic);
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
// A row's precision ("bf16"/"bfloat16", "fp16"/"float16", "fp32"; "mixed", "amp" or "half"
// alone: AMP's float16; "fp8": bf16 with Transformer Engine FP8
// linears, which sets run.fp8 and appends a note, with per-tensor current scaling where the
// row's parallel.other names "current scaling" or "tensorwise", MXFP8 where it names
// "mxfp8"; "nvfp4": bf16 with NVFP4 linears, Fp8Recipe::nvfp4).
void precision(const std::string& text, const std::string& other, TrainConfig& run,
               std::vector<std::string>& notes);
// validation_model.cc: a row whose model dsplan does not model (encoder-decoder, hybrid
// Mamba/attention, MoE named without its experts); the
// heads of a row that gives none; a Llama-family row's vocabulary, embeddings and KV heads;
// a gated MLP's width when the row gives none, and the check that the mapped model carries
// the row's params_B (within 25%). Each appends the assumption it makes to `notes`.
std::optional<Diagnostic> unsupported_architecture(const Json& model);
// (expert_layout also reads the row's context parallelism, explicit pipeline split, MTP
// layers and CPU activation offloading: parallel.cp, pp_first_layers/pp_last_layers,
// model.mtp_layers, parallel.activation_offload_layers.)
// A shape-only row's head width (model.kv_channels or head_dim) and query/key norms
// (qk_layernorm), and its experts (model.experts, topk, moe_ffn, shared_ffn) where given.
std::optional<Diagnostic> moe_details(const Json& model, ModelSpec& spec, std::vector<std::string>& notes);
// parallel.cp and parallel.ep into the space, and an MoE row's expert TP (parallel.etp;
// unset: Megatron-Core's default, the TP degree). MoE rows run Megatron-Core.
std::optional<Diagnostic> expert_layout(const Json& parallel, const Json& model, const ModelSpec& m,
                                        SearchSpace& s, std::vector<std::string>& notes);
int inferred_heads(int hidden, std::vector<std::string>& notes);
void family_defaults(const Json& model, ModelSpec& spec, std::vector<std::string>& notes);
std::optional<Diagnostic> settle_parameters(const Json& model, bool shape_only, ModelSpec& spec,
                                            std::vector<std::string>& notes);
// The optimizer of the row's loop (HF Trainer's AdamW, a client torch optimizer under
// DeepSpeed, bitsandbytes' 8-bit Adam) into run.fused_optimizer and run.optimizer.
void optimizer_settings(const Json& row, TrainConfig& run, std::vector<std::string>& notes);
// DeepSpeed's checkpoint options named in parallel.other (partition_activations,
// cpu_checkpointing / checkpoint_in_cpu) into `run`.
void checkpoint_settings(const Json& row, TrainConfig& run, std::vector<std::string>& notes);
// ZeRO's bucket sizes named in a DeepSpeed row's parallel.other (ds_config keys) into run.zero.
void zero_buckets(const Json& row, TrainConfig& run, std::vector<std::string>& notes);
// The DeepSpeed a row ran (TrainConfig::deepspeed_release): the month of the release its
// text names ("DeepSpeed 0.11.1"), the autotuner's v0.5.8 for the 2021 autotuning tables,
// else a 2025-01 one: published DeepSpeed runs predate 0.17.6 unless they say otherwise
// (validation_fields.cc).
void deepspeed_release(const Json& row, TrainConfig& run, std::vector<std::string>& notes);
// The measured figures of a row's "measured" object that dsplan predicts, appended to
// c.measured (c.request already mapped); validation_measures.cc lists the keys.
void add_measurements(const Json& meas, const Json& row, ValidationCase& c);
// parallel.offload as a boolean (true: the optimizer, ZeRO-Offload) or a word ("none",
// "cpu"/"optimizer", "all"/"param"); nothing for anything else.
// Megatron-Core's selective recompute modules the row's parallel.recompute names
// ("selective: recompute_modules [mla_up_proj, mlp]"), as TrainConfig::recompute_modules,
// pinned in the space (none named: Megatron's default, the attention core; not searched).
void recompute_modules(const Json& p, SearchSpace& s, std::vector<std::string>& notes);
// A Megatron MoE row's dispatcher and permutation, from its parallel.other: Megatron's flex
// dispatcher with DeepEP where it names DeepEP (TrainConfig::moe_deepep), else the all-to-all
// one; Transformer Engine's fused permutation where it names moe_permute_fusion, else
// Megatron-Core's default, the PyTorch ops that add rows with atomics (Grok-1's NeMo 24.xx
// recipes predate the fused kernels).
void moe_kernels(const Json& p, const ModelSpec& m, SearchSpace& s, std::vector<std::string>& notes);
std::optional<Offload> offload_kind(const Json& v);
// Checks the row's parallel layout and batch fields (`p` = its "parallel" object) and sets
// the request's micro-batch, accumulation or global batch (tp and pp already set): the
// first problem, with its JSON path, or nullopt.
std::optional<Diagnostic> layout_and_batch(const Json& p, int gpus, SearchSpace& s,
                                           std::vector<std::string>& notes);
// Options the row leaves unpublished (null or absent: recompute, attention kernel, sequence
// parallelism, and the ZeRO stage where `stage_stated` is false) become searched dimensions,
// so the prediction is the fastest configuration that fits among them. A stack dated before
// mid-2022 (`pre_2022`) keeps the materialised attention kernel, no sequence parallelism and
// no Megatron distributed optimizer, which came later. Recompute, when unpublished, stays off
// (every framework's default). A row that measured an out-of-memory keeps all of them off:
// an OOM report describes the plain run.
void search_unpublished(const Json& row, bool stage_stated, bool pre_2022, SearchSpace& s,
                        std::vector<std::string>& notes);
}  // namespace rows

void add_orderings(const Json& rows, ValidationSet& set);

}  // namespace dsplan::validation
