// Model presets compiled into the binary from configs/models/*.json (cmake/Embed.cmake),
// and resolve_model(): a preset name first, else a file read through the caller's callback.
#include <algorithm>
#include <string>

#include "core/embedded.h"
#include "core/json/model_json.h"

namespace dsplan {

const std::vector<EmbeddedFile>& model_preset_files();  // generated model_presets.cc

namespace {

// "gpt-1.3b" from "gpt-1.3b.json". (EmbeddedFile::name is CMake's NAME_WE, which cuts at
// the first dot: "gpt-1"; so the name is taken from the path instead.)
std::string_view preset_name(const EmbeddedFile& f) {
  std::string_view p = f.path;
  if (auto slash = p.rfind('/'); slash != std::string_view::npos) p.remove_prefix(slash + 1);
  if (p.size() > 5 && p.substr(p.size() - 5) == ".json") p.remove_suffix(5);
  return p;
}

const EmbeddedFile* find_preset(std::string_view name) {
  for (const auto& f : model_preset_files())
    if (preset_name(f) == name) return &f;
  return nullptr;
}

std::string preset_file(const EmbeddedFile& f) { return "configs/models/" + std::string(f.path); }

// A path rather than a preset name: has a folder separator or a file extension.
bool looks_like_path(std::string_view s) {
  return s.find('/') != std::string_view::npos || s.find('\\') != std::string_view::npos ||
         (s.size() > 5 && s.substr(s.size() - 5) == ".json");
}

// Natural order: runs of digits compare as numbers, so gpt-2.7b sorts before gpt-13b.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && digit(a[i2])) ++i2;
      while (j2 < b.size() && digit(b[j2])) ++j2;
      const std::string x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
      if (x.size() != y.size()) return x.size() < y.size();  // no leading zeros in our names
      if (x != y) return x < y;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
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
  for (const auto& f : model_preset_files()) names.emplace_back(preset_name(f));
  std::sort(names.begin(), names.end(), natural_less);
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
    // Keep the reader's reason (too large, a folder); only a plain open failure becomes the
    // preset hint.
    if (d.message == "cannot open file") {
      d.message = "cannot read model file";
      d.hint = "check the path; presets are named without a folder or .json, e.g. \"gpt2\"";
    } else {
      d.message = "cannot read model file: " + d.message;
    }
    return d;
  }
  auto j = parse_json_text(*text, path);
  if (!j) return j.errors();
  return parse_model_json(*j, path);
}

}  // namespace dsplan
