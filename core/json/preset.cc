// Model presets compiled into the binary from configs/models/*.json (cmake/Embed.cmake),
// and resolve_model(): a preset name first, else a file read through the caller's callback.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "core/embedded.h"
#include "core/json/model_json.h"
#include "core/names.h"

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
  return Diagnostic{"", "",
                    "unknown model \"" + std::string(name) + "\": not a preset name or a readable file",
                    (near ? "did you mean \"" + *near + "\"? " : std::string()) + "presets: " + join(names) +
                        "; or give the path of a model JSON or Hugging Face config.json"};
}

// The comparison key of a model name: lower case, a Hugging Face organisation ("meta-llama/")
// and the "-hf" / "Meta-" / "-uncased" / version ("-v0.1") decorations dropped, then the
// separators '-', '_' and ' ' (dots kept: gpt-1.3b and gpt-13b stay apart).
std::string name_key(std::string_view name) {
  std::string s = ascii_lower(name);
  if (auto slash = s.rfind('/'); slash != std::string::npos) s.erase(0, slash + 1);
  auto drop_suffix = [&s](std::string_view suf) {
    if (s.size() > suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0)
      s.erase(s.size() - suf.size());
  };
  drop_suffix("-hf");
  drop_suffix("-uncased");
  if (s.rfind("meta-", 0) == 0) s.erase(0, 5);
  // A trailing version: "-v0.1", "-v2", unless it is the only number in the name, the
  // generation rather than a revision ("DeepSeek-V3" is not "DeepSeek-V2").
  if (auto v = s.rfind("-v"); v != std::string::npos && v + 2 < s.size() &&
                              s.find_first_not_of("0123456789.", v + 2) == std::string::npos &&
                              s.find_first_of("0123456789") < v)
    s.erase(v);
  std::string out;
  for (char ch : s)
    if (ch != '-' && ch != '_' && ch != ' ') out += ch;
  return out;
}

// A Hugging Face id ("org/name") rather than a file path: one slash, plain characters.
bool looks_like_hub_id(std::string_view s) {
  const auto slash = s.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == s.size() ||
      s.find('/', slash + 1) != std::string_view::npos || s.front() == '.')
    return false;
  if (s.size() > 5 && s.substr(s.size() - 5) == ".json") return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

}  // namespace

std::optional<std::string> preset_for_name(std::string_view name) {
  static const std::pair<const char*, const char*> aliases[] = {{"distilbertbase", "distilbert"},
                                                                {"gpt2small", "gpt2"},
                                                                {"bloom", "bloom-176b"},
                                                                {"gemma31bpt", "gemma3-1b"},
                                                                {"llama4maverick17b128e", "llama4-maverick"},
                                                                {"kimik2base", "kimi-k2"},
                                                                {"kimik2instruct", "kimi-k2"}};
  const std::string key = name_key(name);
  if (key.empty()) return std::nullopt;
  for (const auto& [alias, preset] : aliases)
    if (key == alias) return std::string(preset);
  for (const auto& n : model_preset_names())
    if (name_key(n) == key) return n;
  return std::nullopt;
}

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

Expected<ModelSpec> resolve_model(std::string_view name_or_path,
                                  const std::function<Expected<std::string>(const std::string&)>& read_file) {
  if (find_preset(name_or_path)) return model_preset(name_or_path);
  const std::string path(name_or_path);
  auto text = read_file(path);
  if (!text) {
    // A preset named another way: in other case or spelling ("Llama-2-7b"), or by its
    // Hugging Face id ("meta-llama/Llama-2-7b-hf").
    if (!looks_like_path(name_or_path) || looks_like_hub_id(name_or_path))
      if (auto preset = preset_for_name(name_or_path)) return model_preset(*preset);
    Diagnostic d = text.errors().front();
    // A bare name that is no file is an unknown preset; one that is a file the reader could
    // not take (a folder, a silent pipe, too large) keeps the reader's reason.
    if (!looks_like_path(name_or_path) && d.message == "cannot open file")
      return unknown_preset(name_or_path);
    // Keep the reader's reason (too large, a folder); only a plain open failure becomes the
    // preset hint.
    if (d.message == "cannot open file" && looks_like_hub_id(name_or_path)) {
      // A Hugging Face id dsplan has no preset for: it reads no network, so name the file.
      d.message = "not a preset, and no such file: dsplan reads no model hub";
      d.hint = "download the model's config.json (https://huggingface.co/" + path +
               "/resolve/main/config.json) and give its path; `dsplan models` lists the presets";
    } else if (d.message == "cannot open file") {
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
