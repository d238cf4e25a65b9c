// Exact parameter counts of a ModelSpec, by component, as the framework's modules hold
// them (Hugging Face / Megatron layouts). The memory model shards these components
// differently (embeddings vs layers vs replicated norms), so a breakdown is returned.
#pragma once

#include <cstdint>

#include "core/model_spec.h"

namespace dsplan {

struct ParamCounts {
  std::int64_t word_embedding = 0;  // vocab x hidden
  std::int64_t other_embedding = 0; // positions, token types, embedding norm
  std::int64_t attention = 0;       // per layer: QKV + output projection (+ biases)
  std::int64_t mlp = 0;             // per layer: FFN matrices (+ biases)
  std::int64_t layer_norms = 0;     // per layer: the norms' weights and biases
  std::int64_t final_norm = 0;
  std::int64_t lm_head = 0;         // 0 when tied to the word embedding
  std::int64_t pooler = 0;          // BERT pooler
  std::int64_t per_layer() const { return attention + mlp + layer_norms; }
  std::int64_t total(int layers) const {
    return word_embedding + other_embedding + per_layer() * layers + final_norm + lm_head +
           pooler;
  }
  // Largest single module's own parameters (DeepSpeed's largest_layer_params).
  std::int64_t largest_module = 0;
};

ParamCounts count_params(const ModelSpec& m);
inline std::int64_t total_params(const ModelSpec& m) { return count_params(m).total(m.layers); }

// Vocabulary as the framework allocates it: rounded up to vocab_pad_multiple x tp.
std::int64_t padded_vocab(const ModelSpec& m, int tp);

}  // namespace dsplan
