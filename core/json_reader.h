// Strict reading of one JSON object into a value struct. A JsonObjectReader remembers
// which keys were read; finish() reports every key it never read as unknown, with a
// "did you mean" suggestion. Type and range errors name the JSON pointer of the value
// and the allowed range. Nothing here throws: all problems land in the Diagnostics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/diagnostic.h"

namespace dsplan {

using Json = nlohmann::json;

// An exception's message without nlohmann's "[json.exception.<kind>.<id>] " prefix: the
// library's tag, not something a user can act on.
std::string without_json_library_tag(const std::string& what);

// Parses text; on failure returns a diagnostic naming the file and the parser's message.
Expected<Json> parse_json_text(std::string_view text, const std::string& file);

// Inputs are small JSON documents; anything beyond this is refused (and an endless
// source stops there).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{256} << 20;
// How long a pipe or device may stay silent (no writer, or a writer that sends nothing)
// before reading it is given up: `mkfifo f; dsplan estimate --model f` must not hang.
inline constexpr int kInputIdleLimitMs = 20000;
// Reads a whole file; a missing or unreadable file, one over kMaxInputFileBytes, or a pipe
// or device silent for `idle_limit_ms`, is a diagnostic. (CLI-side helper: models never
// call it.)
Expected<std::string> read_text_file(const std::string& path);
Expected<std::string> read_text_file_idle_limit(const std::string& path, int idle_limit_ms);

class JsonObjectReader {
 public:
  // `path` is the JSON pointer of `obj` itself ("" for the root).
  JsonObjectReader(const Json& obj, std::string file, std::string path, Diagnostics& out);

  bool is_object() const { return obj_.is_object(); }
  bool has(std::string_view key) const;

  // Each getter returns true when the key was present and valid. A missing required key,
  // a wrong type or an out-of-range value adds a diagnostic and returns false; `out` is
  // left unchanged unless the value is valid.
  bool get(std::string_view key, double& out, bool required, double lo, double hi);
  bool get(std::string_view key, int& out, bool required, int lo, int hi);
  bool get(std::string_view key, std::int64_t& out, bool required, std::int64_t lo,
           std::int64_t hi);
  bool get(std::string_view key, bool& out, bool required);
  bool get(std::string_view key, std::string& out, bool required);
  // Accepts one of `allowed` (exact string) and stores its index.
  bool get_choice(std::string_view key, int& index, bool required,
                  const std::vector<std::string>& allowed);

  // The child value for a nested object/array, marking the key as known; nullptr if absent
  // (adds a diagnostic if required).
  const Json* child(std::string_view key, bool required);
  // Marks a key as accepted without reading it (documentation-only keys such as "source").
  void allow(std::string_view key);

  // JSON pointer of a key of this object.
  std::string path_of(std::string_view key) const;
  void error(std::string_view key, std::string message, std::string hint = "");

  // Reports unknown keys against everything that was asked for. Call once at the end.
  void finish();

 private:
  const Json* lookup(std::string_view key, bool required);

  const Json& obj_;
  std::string file_, path_;
  Diagnostics& out_;
  std::vector<std::string> known_;
};

}  // namespace dsplan
