// Lookup of the presets compiled into the binary (hwdb/data, embedded by cmake/Embed.cmake)
// and the small parsing helpers shared by the GPU and system parsers.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>

#include "hwdb/hwdb.h"
#include "hwdb/internal.h"

namespace dsplan {
namespace hwdb_detail {
namespace {

// "gpus/a100-80gb.json" lies in "gpus".
bool in_dir(const EmbeddedFile& f, std::string_view dir) {
  return f.path.size() > dir.size() && f.path.substr(0, dir.size()) == dir &&
         f.path[dir.size()] == '/';
}

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

}  // namespace

const EmbeddedFile* find_preset(std::string_view dir, std::string_view name) {
  for (const auto& f : hardware_preset_files())
    if (in_dir(f, dir) && f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> preset_names(std::string_view dir) {
  std::vector<std::string> names;
  for (const auto& f : hardware_preset_files())
    if (in_dir(f, dir)) names.emplace_back(f.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::string preset_label(const EmbeddedFile& f) {
  return "<preset " + std::string(f.path) + ">";
}

Diagnostic unknown_name(std::string file, std::string path, std::string_view what,
                        std::string_view name, const std::vector<std::string>& known) {
  std::optional<std::string> near = closest_match(name, known);
  // "h100" -> "h100-80gb": a name that starts with the word, else one that contains it.
  for (auto* pos : {+[](std::size_t p) { return p == 0; },
                    +[](std::size_t p) { return p != std::string::npos; }}) {
    for (const auto& k : known)
      if (!near && !name.empty() && pos(k.find(name))) near = k;
  }
  std::string hint = near ? "did you mean \"" + *near + "\"? " : std::string();
  hint += "known: " + join(known);
  return {std::move(file), std::move(path),
          "unknown " + std::string(what) + " \"" + std::string(name) + "\"", hint};
}

std::optional<Json> apply_base(const Json& j, std::string_view dir, const std::string& file,
                               const std::string& path, Diagnostics& errs) {
  if (!j.is_object() || !j.contains("base")) return std::nullopt;
  const Json& b = j["base"];
  std::string what = dir == kGpuDir ? "GPU preset" : "system preset";
  if (!b.is_string()) {
    errs.push_back({file, path + "/base", "expected a string naming a " + what, ""});
    return std::nullopt;
  }
  const EmbeddedFile* f = find_preset(dir, b.get<std::string>());
  if (!f) {
    errs.push_back(unknown_name(file, path + "/base", what, b.get<std::string>(),
                                preset_names(dir)));
    return std::nullopt;
  }
  Json merged = Json::parse(f->text, nullptr, /*allow_exceptions=*/false);
  if (!merged.is_object()) {  // cannot happen for a shipped preset; the tests load them all
    errs.push_back({preset_label(*f), "", "malformed preset", ""});
    return std::nullopt;
  }
  for (auto it = j.begin(); it != j.end(); ++it) merged[it.key()] = it.value();
  return merged;
}

bool get_number(JsonObjectReader& r, std::string_view key, double& out, double hi,
                std::string_view what, bool zero_ok, bool required) {
  const Json* v = r.child(key, required);  // reports a missing required key
  if (!v) return false;
  if (!v->is_number()) {
    r.error(key, std::string("expected a number, found ") +
                     (v->is_string() ? "a string" : v->is_boolean() ? "a boolean" : "an object or array"),
            std::string(what));
    return false;
  }
  double x = v->get<double>();
  if (x < 0 || (x == 0 && !zero_ok)) {
    r.error(key, std::string(zero_ok ? "must not be negative" : "must be greater than 0") +
                     ", found " + num(x),
            std::string(what));
    return false;
  }
  if (!std::isfinite(x) || x > hi) {
    r.error(key, "value " + num(x) + " is implausibly large (at most " + num(hi) + ")",
            "check the unit: " + std::string(what));
    return false;
  }
  // A millionth of the largest plausible value is below any real device or link of the
  // kind (0.01 Gbit/s for a NIC, 0.1 GB/s for HBM, 0.005 MHz for a clock): such a figure
  // is a typo or a unit slip, and would price a step at astronomical times.
  if (x > 0 && x < hi * 1e-6) {
    r.error(key, "value " + num(x) + " is implausibly small (at least " + num(hi * 1e-6) + ")",
            "check the unit: " + std::string(what));
    return false;
  }
  out = x;
  return true;
}

Json tidy(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", x);
  double r = std::strtod(buf, nullptr);
  if (std::abs(r) < 1e15 && r == std::floor(r)) return static_cast<std::int64_t>(r);
  return r;
}

}  // namespace hwdb_detail

namespace {

template <class T, class Parse>
Expected<T> load_preset(std::string_view dir, std::string_view name, std::string_view what,
                        Parse parse) {
  const EmbeddedFile* f = hwdb_detail::find_preset(dir, name);
  if (!f)
    return hwdb_detail::unknown_name("", "", what, name, hwdb_detail::preset_names(dir));
  std::string label = hwdb_detail::preset_label(*f);
  Expected<Json> j = parse_json_text(f->text, label);
  if (!j) return j.errors();
  return parse(*j, label);
}

}  // namespace

Expected<GpuSpec> gpu_preset(std::string_view name) {
  return load_preset<GpuSpec>(hwdb_detail::kGpuDir, name, "GPU preset",
                              [](const Json& j, const std::string& f) { return parse_gpu_json(j, f); });
}

Expected<SystemSpec> system_preset(std::string_view name) {
  return load_preset<SystemSpec>(hwdb_detail::kSystemDir, name, "system preset",
                                 [](const Json& j, const std::string& f) { return parse_system_json(j, f); });
}

std::vector<std::string> gpu_preset_names() { return hwdb_detail::preset_names(hwdb_detail::kGpuDir); }
std::vector<std::string> system_preset_names() {
  return hwdb_detail::preset_names(hwdb_detail::kSystemDir);
}

std::string hardware_preset_source(std::string_view name) {
  const EmbeddedFile* f = hwdb_detail::find_preset(hwdb_detail::kSystemDir, name);
  if (!f) f = hwdb_detail::find_preset(hwdb_detail::kGpuDir, name);
  if (!f) return "";
  Json j = Json::parse(f->text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return "";
  auto it = j.find("source");
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace dsplan
