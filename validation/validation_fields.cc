// Field checks of a validation row before it is mapped (load_validation, validation_rows.cc):
// the counts a row states (GPUs, nodes, the model's shape, the parallel layout's degrees
// and batches) must be numbers when present, the sequence length within estimate's --seq
// bound, and a measured figure at most 10^12 in its unit (no published rate or time comes
// near it). The row's other fields are free text by design (papers describe their runs in
// words: "zero_stage": "FULL_SHARD", "precision": "mixed"), read by validation_map.cc.
// Also which DeepSpeed release a row ran, from the version its text names.
#include <cmath>
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

void rows::deepspeed_release(const Json& row, TrainConfig& run, std::vector<std::string>& notes) {
  if (run.framework != Framework::deepspeed) return;
  static const std::regex version(R"(deepspeed[ =v-]*(\d+)\.(\d+)\.(\d+))", std::regex::icase);
  const std::string text =
      str(row, "source") + " " + str(at(row, "parallel"), "other") + " " + joined(at(row, "notes"));
  std::smatch v;
  const bool named = std::regex_search(text, v, version);
  const long code = named ? std::stol(v[1]) * 10000 + std::stol(v[2]) * 100 + std::stol(v[3]) : 0;
  run.deepspeed_release = named && code >= 1706 ? 0 : 202501;
  if (run.precision == Precision::bf16)
    notes.push_back(
        std::string(run.deepspeed_release == 0 ? "DeepSpeed 0.17.6 or later" : "DeepSpeed before 0.17.6") +
        (named ? " (named)" : " (no release named)") + ": bf16 without ZeRO outside a pipeline runs " +
        (run.deepspeed_release == 0 ? "FP16_Optimizer's layout (DDP_BFLOAT16)" : "BF16_Optimizer"));
}

}  // namespace dsplan::validation
