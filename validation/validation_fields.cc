// Field checks of a validation row before it is mapped (load_validation, validation_rows.cc):
// the counts a row states (GPUs, nodes, the model's shape, the parallel layout's degrees
// and batches) must be numbers when present, the sequence length within estimate's --seq
// bound, and a measured figure at most 10^12 in its unit (no published rate or time comes
// near it). The row's other fields are free text by design (papers describe their runs in
// words: "zero_stage": "FULL_SHARD", "precision": "mixed"), read by validation_map.cc.
// Also which DeepSpeed release a row ran, from the version its text names.
#include <cmath>
#include <cstdio>
#include <regex>
#include <string>

#include "validation/validation_rows.h"

namespace dsplan::validation {

std::optional<Diagnostic> rows::field_problem(const Json& row) {
  const Json& id = at(row, "id");
  if (!id.is_string() || id.get<std::string>().empty())
    return Diagnostic{"", "/id", "row has no id", "a non-empty string naming the row"};
  struct Section {
    const char* name;
    std::initializer_list<const char*> keys;
  };
  const Section counts[] = {
      {"hardware", {"num_gpus", "nodes"}},
      {"model", {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "seq_len", "vocab"}},
      {"parallel", {"tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch", "global_batch", "grad_accum"}}};
  for (const Section& s : counts) {
    const Json& sec = at(row, s.name);
    for (const char* k : s.keys) {
      const Json& v = at(sec, k);
      if (v.is_null() || (v.is_number() && !v.is_boolean())) continue;
      return Diagnostic{"", std::string("/") + s.name + "/" + k,
                        std::string(k) + " must be a number, got " + v.dump(),
                        "a count, or leave the key out"};
    }
  }
  const Json& seq = at(at(row, "model"), "seq_len");
  if (seq.is_number() && (seq.get<double>() < 1 || seq.get<double>() > (1 << 24)))
    return Diagnostic{"", "/model/seq_len", "seq_len " + seq.dump() + " is out of range",
                      "tokens, an integer in [1, 16777216], as estimate's --seq takes"};
  const Json& measured = at(row, "measured");
  if (measured.is_object())
    for (const auto& [k, v] : measured.items())
      if (v.is_number() && !v.is_boolean() && !(std::fabs(v.get<double>()) <= 1e12))
        return Diagnostic{"", "/measured/" + k, k + " " + v.dump() + " is out of range",
                          "a measured figure in its key's unit, at most 10^12"};
  return std::nullopt;
}

namespace {

// The month (YYYYMM) of a DeepSpeed release's tag in deepspeedai/DeepSpeed: each minor
// version's .0 tag, and the two patch releases that changed what dsplan prices (v0.5.8, the
// autotuner's; v0.17.6, bf16's DDP_BFLOAT16). Versions after the table's last are current (0).
int release_month(long major, long minor, long patch) {
  if (major != 0) return 0;
  if (minor == 5 && patch >= 8) return 202111;
  if (minor == 17 && patch >= 6) return 202509;
  static const int month[] = {0,      202005, 202006, 202009, 202106, 202108, 202203, 202208, 202301, 202304,
                              202307, 202310, 202311, 202401, 202403, 202408, 202411, 202506, 202510, 202605};
  constexpr long known = sizeof(month) / sizeof(month[0]);
  if (minor < 1) return 202005;
  return minor < known ? month[minor] : 0;
}

}  // namespace

void rows::deepspeed_release(const Json& row, TrainConfig& run, std::vector<std::string>& notes) {
  if (run.framework != Framework::deepspeed) return;
  static const std::regex version(R"(deepspeed[ =v-]*(\d{1,4})\.(\d{1,4})\.(\d{1,4}))", std::regex::icase);
  const std::string text =
      str(row, "source") + " " + str(at(row, "parallel"), "other") + " " + joined(at(row, "notes"));
  std::smatch v;
  const bool named = std::regex_search(text, v, version);
  // The DeepSpeedExamples autotuning tables of 2021 (transformers 4.12) ran the release the
  // autotuner shipped in, v0.5.7-v0.5.8 (session 2).
  const bool autotuner_2021 = !named && has(str(row, "source"), "transformers 4.12");
  run.deepspeed_release = named            ? release_month(std::stol(v[1]), std::stol(v[2]), std::stol(v[3]))
                          : autotuner_2021 ? 202111
                                           : 202501;
  // What that release does, asked of TrainConfig, which holds the thresholds (as the Megatron
  // release note does in validation_map.cc).
  TrainConfig probe;
  probe.framework = Framework::deepspeed;
  probe.deepspeed_release = run.deepspeed_release;
  probe.zero_stage = 3;
  const bool blocking_fetch = probe.deepspeed_zero3_sync_fetch();
  probe.zero_stage = 0;
  probe.precision = Precision::bf16;
  const bool bf16_optimizer = probe.deepspeed_bf16_optimizer();
  char month[16] = "current";
  if (run.deepspeed_release != 0)
    std::snprintf(month, sizeof month, "%04d-%02d", run.deepspeed_release / 100, run.deepspeed_release % 100);
  notes.push_back(
      std::string("DeepSpeed release read as ") + month +
      (named            ? " (the row names " + v.str(0) + ")"
       : autotuner_2021 ? " (the 2021 autotuning tables: v0.5.8)"
                        : " (no release named)") +
      (blocking_fetch ? ": ZeRO-3's submodule fetches block" : ": ZeRO-3's submodule hooks are host time"));
  if (run.precision == Precision::bf16)
    notes.push_back(std::string(bf16_optimizer ? "DeepSpeed before 0.17.6" : "DeepSpeed 0.17.6 or later") +
                    (named ? " (named)" : " (no release named)") +
                    ": bf16 without ZeRO outside a pipeline runs " +
                    (bf16_optimizer ? "BF16_Optimizer" : "FP16_Optimizer's layout (DDP_BFLOAT16)"));
}

}  // namespace dsplan::validation
