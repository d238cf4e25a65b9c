// The keys of a published row under the names other tools give them (docs/accuracy.md,
// "Mapping decisions", Key names): Hugging Face config names (num_hidden_layers,
// hidden_size, num_attention_heads, num_key_value_heads, intermediate_size, vocab_size,
// n_group, topk_group), Megatron's arguments (num_layers, seq_length,
// tensor/pipeline_model_parallel_size, micro/global_batch_size, moe_router_num_groups,
// moe_router_group_topk), DeepSpeed's (train_micro_batch_size_per_gpu,
// gradient_accumulation_steps) and short forms (tp, pp, dp, mbs, gbs, world_size). Each is
// copied to the name of shared/validation/published.json's format where that name is
// absent; a row that gives both keeps its own canonical value.
#include <utility>

#include "validation/validation_rows.h"

namespace dsplan::validation::rows {
namespace {

using Aliases = std::initializer_list<std::pair<const char*, std::initializer_list<const char*>>>;

void canonicalise(Json& obj, Aliases aliases) {
  if (!obj.is_object()) return;
  for (const auto& [canonical, others] : aliases) {
    if (obj.contains(canonical)) continue;
    for (const char* other : others)
      if (obj.contains(other)) {
        obj[canonical] = obj[other];
        break;
      }
  }
}

}  // namespace

Json canonical_row(const Json& row) {
  if (!row.is_object()) return row;
  Json out = row;
  if (out.contains("model"))
    canonicalise(out["model"], {{"layers", {"num_layers", "num_hidden_layers", "n_layer", "n_layers"}},
                                {"hidden", {"hidden_size", "d_model", "n_embd", "dim"}},
                                {"heads", {"num_attention_heads", "n_head", "n_heads", "attention_heads"}},
                                {"kv_heads", {"num_key_value_heads", "num_query_groups", "n_kv_heads"}},
                                {"ffn_hidden", {"ffn_hidden_size", "intermediate_size", "ffn_dim", "d_ff"}},
                                {"vocab", {"vocab_size", "padded_vocab_size"}},
                                {"moe_groups", {"moe_router_num_groups", "n_group"}},
                                {"moe_group_topk", {"moe_router_group_topk", "topk_group"}},
                                {"seq_len", {"seq_length", "sequence_length", "max_seq_len", "seq"}}});
  if (out.contains("hardware"))
    canonicalise(out["hardware"], {{"gpu", {"gpu_type", "accelerator"}},
                                   {"num_gpus", {"gpus", "world_size", "total_gpus"}},
                                   {"nodes", {"num_nodes", "node_count"}}});
  if (out.contains("parallel"))
    canonicalise(
        out["parallel"],
        {{"tp", {"tensor_model_parallel_size", "tensor_parallel", "tp_size"}},
         {"pp", {"pipeline_model_parallel_size", "pipeline_parallel", "pp_size"}},
         {"dp", {"data_parallel", "dp_size", "data_parallel_size"}},
         {"cp", {"context_parallel_size", "cp_size"}},
         {"micro_batch", {"micro_batch_size", "train_micro_batch_size_per_gpu", "mbs"}},
         {"global_batch", {"global_batch_size", "train_batch_size", "gbs"}},
         {"grad_accum", {"gradient_accumulation_steps", "gas"}},
         {"zero_stage", {"zero"}},
         {"recompute", {"activation_checkpointing", "checkpoint_activations", "recompute_granularity"}},
         {"flash_attention", {"use_flash_attn", "flash"}},
         {"sequence_parallel", {"sp"}}});
  // The model's sequence under parallel (some tables keep it with the batch).
  if (out.contains("model") && out["model"].is_object() && !out["model"].contains("seq_len") &&
      out.contains("parallel") && out["parallel"].is_object())
    for (const char* k : {"seq_len", "seq_length", "sequence_length"})
      if (out["parallel"].contains(k)) {
        out["model"]["seq_len"] = out["parallel"][k];
        break;
      }
  return out;
}

}  // namespace dsplan::validation::rows
