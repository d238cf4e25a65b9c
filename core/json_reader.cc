// Implementation of the strict JSON object reader; see json_reader.h.
#include "core/json_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

namespace dsplan {
namespace {

std::string type_name(const Json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

std::string num(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

// The first key that appears twice in one object, as a JSON pointer (nlohmann keeps the
// last silently; for a hand-written input the earlier value is then lost unseen).
struct DuplicateKeyFinder {
  struct Frame {
    bool array = false;
    std::set<std::string> keys;
    std::string path, last_key;
    int index = -1;
  };
  std::vector<Frame> stack;
  std::optional<std::string> duplicate;

  std::string child_path() {
    if (stack.empty()) return "";
    Frame& top = stack.back();
    return top.path + "/" + (top.array ? std::to_string(++top.index) : top.last_key);
  }
  bool operator()(int, Json::parse_event_t event, Json& parsed) {
    using E = Json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start: {
        Frame f;
        f.array = event == E::array_start;
        f.path = child_path();
        stack.push_back(std::move(f));
        break;
      }
      case E::object_end:
      case E::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case E::key:
        if (!stack.empty() && parsed.is_string()) {
          Frame& top = stack.back();
          top.last_key = parsed.get<std::string>();
          if (!top.keys.insert(top.last_key).second && !duplicate) duplicate = top.path + "/" + top.last_key;
        }
        break;
      case E::value:
        if (!stack.empty() && stack.back().array) ++stack.back().index;
        break;
    }
    return true;
  }
};

// Deepest [ / { nesting of the text, strings skipped. nlohmann's parser needs memory
// quadratic in the depth (100,000 nested arrays: ~10 GB, found by fuzzing), and no dsplan
// input nests beyond a handful of levels, so the text is measured before it is parsed.
int nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

constexpr int kMaxNesting = 256;

}  // namespace

std::string without_json_library_tag(const std::string& what) {
  if (what.rfind("[json.exception.", 0) != 0) return what;
  const size_t end = what.find("] ");
  return end == std::string::npos ? what : what.substr(end + 2);
}

Expected<Json> parse_json_text(std::string_view text, const std::string& file) {
  if (nesting_depth(text) > kMaxNesting)
    return Diagnostic{file, "",
                      "nested deeper than " + std::to_string(kMaxNesting) + " levels: not a dsplan input",
                      "give a JSON file (model, hardware, profile, plan or measurements)"};
  DuplicateKeyFinder dup;
  Json j = Json::parse(text, std::ref(dup), /*allow_exceptions=*/false, /*ignore_comments=*/false);
  if (!j.is_discarded() && dup.duplicate)
    return Diagnostic{file, *dup.duplicate, "key appears twice in the same object",
                      "keep one: JSON readers disagree on which copy wins"};
  if (j.is_discarded()) {
    // Re-parse with exceptions off is silent; find the byte offset with the SAX-less API.
    try {
      [[maybe_unused]] const Json again = Json::parse(text);  // throws with the byte offset
    } catch (const Json::parse_error& e) {
      return Diagnostic{file, "", "malformed JSON: " + without_json_library_tag(e.what()),
                        "check for a missing comma, quote or bracket near that byte"};
    } catch (const Json::exception& e) {  // e.g. out_of_range.406: a number like 1e400
      return Diagnostic{file, "", "invalid JSON: " + without_json_library_tag(e.what()),
                        "numbers must fit in a double (about 1.8e308)"};
    }
    return Diagnostic{file, "", "malformed JSON", ""};
  }
  return j;
}

namespace {

Diagnostic too_large(const std::string& path) {
  return Diagnostic{path, "",
                    "larger than " + std::to_string(kMaxInputFileBytes >> 20) + " MiB: not a dsplan input",
                    "give a JSON file (model, hardware, profile, plan or measurements)"};
}

// A FIFO, terminal or character device: opened without blocking (a FIFO's open() waits for
// a writer) and read with poll(), so a source that stays silent ends in an error.
Expected<std::string> read_stream(const std::string& path, int idle_limit_ms) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Diagnostic{path, "", "cannot open file", "check the path and permissions"};
  std::string text;
  std::array<char, 1 << 16> buf;
  std::optional<Diagnostic> err;
  while (!err) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, idle_limit_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      err = Diagnostic{path, "", "read error", "check the file"};
      break;
    }
    if (ready == 0) {
      err = Diagnostic{path, "",
                       "no data for " +
                           (idle_limit_ms % 1000 == 0 ? std::to_string(idle_limit_ms / 1000) + " s"
                                                      : std::to_string(idle_limit_ms) + " ms") +
                           " (a pipe without a writer, or a device that sends nothing)",
                       "give a JSON file, or start the program that writes the pipe first"};
      break;
    }
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0) err = Diagnostic{path, "", "read error", "check the file"};
    if (n <= 0) break;  // 0: the writer closed the pipe (end of file)
    text.append(buf.data(), static_cast<std::size_t>(n));
    if (text.size() > kMaxInputFileBytes) err = too_large(path);
  }
  ::close(fd);
  if (err) return *err;
  return text;
}

}  // namespace

Expected<std::string> read_text_file(const std::string& path) {
  return read_text_file_idle_limit(path, kInputIdleLimitMs);
}

Expected<std::string> read_text_file_idle_limit(const std::string& path, int idle_limit_ms) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status))
    return Diagnostic{path, "", "is a folder, not a file", "give the path of a JSON file"};
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    return read_stream(path, idle_limit_ms);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Diagnostic{path, "", "cannot open file", "check the path and permissions"};
  // Read in chunks up to a cap, in case the file grows while it is read.
  std::string text;
  std::array<char, 1 << 16> buf;
  while (in.read(buf.data(), buf.size()) || in.gcount() > 0) {
    text.append(buf.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxInputFileBytes) return too_large(path);
  }
  if (in.bad()) return Diagnostic{path, "", "read error", "check the file"};
  return text;
}

JsonObjectReader::JsonObjectReader(const Json& obj, std::string file, std::string path,
                                   Diagnostics& out)
    : obj_(obj), file_(std::move(file)), path_(std::move(path)), out_(out) {
  if (!obj_.is_object())
    out_.push_back({file_, path_.empty() ? "/" : path_,
                    "expected a JSON object, found " + type_name(obj_), ""});
}

bool JsonObjectReader::has(std::string_view key) const {
  return obj_.is_object() && obj_.contains(std::string(key));
}

std::string JsonObjectReader::path_of(std::string_view key) const {
  return path_ + "/" + std::string(key);
}

void JsonObjectReader::error(std::string_view key, std::string message, std::string hint) {
  out_.push_back({file_, path_of(key), std::move(message), std::move(hint)});
}

void JsonObjectReader::allow(std::string_view key) { known_.emplace_back(key); }

const Json* JsonObjectReader::lookup(std::string_view key, bool required) {
  known_.emplace_back(key);
  if (!obj_.is_object()) return nullptr;
  auto it = obj_.find(std::string(key));
  if (it == obj_.end() || it->is_null()) {
    if (required) error(key, "missing required key", "");
    return nullptr;
  }
  return &*it;
}

bool JsonObjectReader::get(std::string_view key, double& out, bool required, double lo,
                           double hi) {
  const Json* j = lookup(key, required);
  if (!j) return false;
  if (!j->is_number()) {
    error(key, "expected a number, found " + type_name(*j), "a number in [" + num(lo) + ", " + num(hi) + "]");
    return false;
  }
  double x = j->get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) {
    error(key, "value " + j->dump() + " is out of range", "allowed: [" + num(lo) + ", " + num(hi) + "]");
    return false;
  }
  out = x;
  return true;
}

bool JsonObjectReader::get(std::string_view key, std::int64_t& out, bool required,
                           std::int64_t lo, std::int64_t hi) {
  const Json* j = lookup(key, required);
  if (!j) return false;
  bool integral = j->is_number_integer() ||
                  (j->is_number_float() && std::floor(j->get<double>()) == j->get<double>());
  if (!integral) {
    error(key, "expected an integer, found " + type_name(*j),
          "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return false;
  }
  double d = j->get<double>();
  if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
    error(key, "value " + j->dump() + " is out of range",  // as written: 67108863, not 6.71089e+07
          "allowed: [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return false;
  }
  out = j->is_number_integer() ? j->get<std::int64_t>() : static_cast<std::int64_t>(d);
  return true;
}

bool JsonObjectReader::get(std::string_view key, int& out, bool required, int lo, int hi) {
  std::int64_t v = 0;
  if (!get(key, v, required, lo, hi)) return false;
  out = static_cast<int>(v);
  return true;
}

bool JsonObjectReader::get(std::string_view key, bool& out, bool required) {
  const Json* j = lookup(key, required);
  if (!j) return false;
  if (!j->is_boolean()) {
    error(key, "expected a boolean, found " + type_name(*j), "true or false");
    return false;
  }
  out = j->get<bool>();
  return true;
}

bool JsonObjectReader::get(std::string_view key, std::string& out, bool required) {
  const Json* j = lookup(key, required);
  if (!j) return false;
  if (!j->is_string()) {
    error(key, "expected a string, found " + type_name(*j), "");
    return false;
  }
  out = j->get<std::string>();
  // Names and notes are printed back to the terminal: a control character (a NUL, a newline,
  // an escape sequence) or a text-direction override would forge or hide output there.
  if (const std::size_t at = first_unprintable(out); at != std::string::npos) {
    error(key, "contains a control or text-direction character (byte " + std::to_string(at) + ")",
          "plain printable text");
    return false;
  }
  return true;
}

bool JsonObjectReader::get_choice(std::string_view key, int& index, bool required,
                                  const std::vector<std::string>& allowed) {
  std::string s;
  const Json* j = lookup(key, required);
  if (!j) return false;
  if (!j->is_string()) {
    error(key, "expected a string, found " + type_name(*j), "one of: " + join(allowed));
    return false;
  }
  s = j->get<std::string>();
  auto it = std::find(allowed.begin(), allowed.end(), s);
  if (it == allowed.end()) {
    auto near = closest_match(s, allowed);
    error(key, "unknown value \"" + s + "\"",
          (near ? "did you mean \"" + *near + "\"? " : std::string()) + "one of: " + join(allowed));
    return false;
  }
  index = static_cast<int>(it - allowed.begin());
  return true;
}

const Json* JsonObjectReader::child(std::string_view key, bool required) {
  return lookup(key, required);
}

void JsonObjectReader::finish() {
  if (!obj_.is_object()) return;
  for (auto it = obj_.begin(); it != obj_.end(); ++it) {
    if (std::find(known_.begin(), known_.end(), it.key()) != known_.end()) continue;
    auto near = closest_match(it.key(), known_);
    std::vector<std::string> sorted = known_;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    error(it.key(), "unknown key \"" + it.key() + "\"",
          near ? "did you mean \"" + *near + "\"?" : "known keys: " + join(sorted));
  }
}

}  // namespace dsplan
