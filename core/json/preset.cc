// Model presets compiled into the binary from configs/models/*.json (cmake/Embed.cmake),
// and resolve_model(): a preset name first, else a file read through the caller's callback.
#include <algorithm>

#include "core/embedded.h"
#include "core/json/model_json.h"

namespace dsplan {

const std::vector<EmbeddedFile>& model_preset_files();  // generated model_presets.cc

namespace {

const EmbeddedFile* find_preset(std::string_view name) {
  for (const auto& f : model_preset_files())
    if (f.name == name) return &f;
  return nullptr;
}

std::string preset_file(const EmbeddedFile& f) { return "configs/models/" + std::string(f.path); }

// A path rather than a preset name: has a folder separator or a file extension.
bool looks_like_path(std::string_view s) {
  return s.find('/') != std::string_view::npos || s.find('\\') != std::string_view::npos ||
         (s.size() > 5 && s.substr(s.size() - 5) == ".json");
}

Diagnostic unknown_preset(std::string_view name) {
  auto names = model_preset_names();
  auto near = closest_match(name, names);
  return Diagnostic{"", "", "unknown model \"" + std::string(name) + "\": not a preset name or a readable file",
                    (near ? "did you mean \"" + *near + "\"? " : std::string()) + "presets: " +
                        join(names) + "; or give the path of a model JSON or Hugging Face config.json"};
}

}  // namespace

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const auto& f : model_preset_files()) names.emplace_back(f.name);
  std::sort(names.begin(), names.end());
  return names;
}

Expected<ModelSpec> model_preset(std::string_view name) {
  const EmbeddedFile* f = find_preset(name);
  if (!f) return unknown_preset(name);
  auto j = parse_json_text(f->text, preset_file(*f));
  if (!j) return j.errors();
  return parse_model_json(*j, preset_file(*f));
}

std::string model_preset_source(std::string_view name) {
  const EmbeddedFile* f = find_preset(name);
  if (!f) return "";
  auto j = parse_json_text(f->text, preset_file(*f));
  if (!j || !j->is_object() || !j->contains("source") || !(*j)["source"].is_string()) return "";
  return (*j)["source"].get<std::string>();
}

Expected<ModelSpec> resolve_model(
    std::string_view name_or_path,
    const std::function<Expected<std::string>(const std::string&)>& read_file) {
  if (find_preset(name_or_path)) return model_preset(name_or_path);
  const std::string path(name_or_path);
  auto text = read_file(path);
  if (!text) {
    if (!looks_like_path(name_or_path)) return unknown_preset(name_or_path);
    Diagnostic d = text.errors().front();
    d.message = "cannot read model file";
    d.hint = "check the path; presets are named without a folder or .json, e.g. \"gpt2\"";
    return d;
  }
  auto j = parse_json_text(*text, path);
  if (!j) return j.errors();
  return parse_model_json(*j, path);
}

}  // namespace dsplan
