// Field checks of a validation row before it is mapped (load_validation, validation_rows.cc):
// the counts a row states (GPUs, nodes, the model's shape, the parallel layout's degrees
// and batches) must be numbers when present, the sequence length within estimate's --seq
// bound, and a measured figure at most 10^12 in its unit (no published rate or time comes
// near it). The row's other fields are free text by design (papers describe their runs in
// words: "zero_stage": "FULL_SHARD", "precision": "mixed"), read by validation_map.cc.
#include <cmath>
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

}  // namespace dsplan::validation
