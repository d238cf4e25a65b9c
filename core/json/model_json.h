// Loading transformer shapes (ModelSpec) from JSON: dsplan's own model schema, Hugging Face
// config.json files (detected by their "model_type" key), and the presets compiled into the
// binary from configs/models/*.json. Everything here returns Diagnostics instead of throwing;
// file reading is done by the caller's callback so the library itself touches no files.
// The schema and the preset sources are documented in docs/model.md §1 Models.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/json_reader.h"
#include "core/model_spec.h"

namespace dsplan {

// A dsplan model object or a Hugging Face config.json (auto-detected by "model_type").
// `file` names the input in diagnostics; its stem is the default model name.
Expected<ModelSpec> parse_model_json(const Json& j, const std::string& file);

// Cross-field checks shared by every source: positive sizes, heads divisible by kv_heads,
// hidden == heads * head_dim unless head_dim was given explicitly.
Diagnostics validate_model(const ModelSpec& m, const std::string& file);

// An embedded preset by name; an unknown name gives a did-you-mean and the list.
Expected<ModelSpec> model_preset(std::string_view name);
std::vector<std::string> model_preset_names();
// The preset's "source" citation ("" when it has none or the name is unknown).
std::string model_preset_source(std::string_view name);

// The preset a name means when it is not a preset's exact name: the same name in other case
// or with other separators ("Llama-2-7B" = llama2-7b), or a Hugging Face id
// ("meta-llama/Llama-2-7b-hf", "bert-base-uncased", "mistralai/Mistral-7B-v0.1"); nothing
// when no preset matches.
std::optional<std::string> preset_for_name(std::string_view name);

// A preset name, else a path read through `read_file` (the CLI passes read_text_file); a
// name that is neither, nor a readable file, may still name a preset (preset_for_name).
Expected<ModelSpec> resolve_model(
    std::string_view name_or_path,
    const std::function<Expected<std::string>(const std::string&)>& read_file);

// The dsplan schema with every key written out; parse_model_json() reads it back unchanged.
Json model_to_json(const ModelSpec& m);

// The Hugging Face model_type values parse_model_json() understands.
const std::vector<std::string>& hf_model_types();

namespace detail {
// Hugging Face config.json import (hf_config.cc); `j` must have a string "model_type".
Expected<ModelSpec> parse_hf_config(const Json& j, const std::string& file);
// "gpt2" from "configs/models/gpt2.json"; the parent folder's name for ".../config.json".
std::string model_name_from_file(const std::string& file);
}  // namespace detail

}  // namespace dsplan
