// Errors as data. Every loader and validator returns Diagnostics rather than throwing or
// printing: each names the file, the JSON pointer of the offending value, what is wrong
// and a hint (allowed values, or a "did you mean" suggestion). Only cli/ turns them into
// text and an exit status.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace dsplan {

struct Diagnostic {
  std::string file;       // "" when the input did not come from a file (a flag, a preset)
  std::string json_path;  // JSON pointer such as "/gpu/hbm_GBps"; "" for the whole input
  std::string message;    // what is wrong
  std::string hint;       // allowed values or a suggestion; may be empty

  std::string to_string() const;  // "file: /path: message (hint)"
};

using Diagnostics = std::vector<Diagnostic>;

// Either a value or at least one diagnostic.
template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}                 // NOLINT: implicit by design
  Expected(Diagnostics errs) : v_(std::move(errs)) {}        // NOLINT
  Expected(Diagnostic err) : v_(Diagnostics{std::move(err)}) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T* operator->() const { return &std::get<T>(v_); }
  const T& operator*() const { return std::get<T>(v_); }
  const Diagnostics& errors() const { return std::get<Diagnostics>(v_); }

 private:
  std::variant<T, Diagnostics> v_;
};

// Edit distance used for "did you mean" suggestions.
int edit_distance(std::string_view a, std::string_view b);

// The closest candidate within a small distance, or nothing.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

// "a, b, c" for hints listing allowed values.
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

// Text read from a file or the command line that is printed back to a terminal: the byte
// offset of the first character that could forge or hide output there (C0 and C1 control
// characters, DEL, U+2028/2029 separators, bidirectional embeddings, overrides and
// isolates U+202A-202E and U+2066-2069), or npos when there is none.
std::size_t first_unprintable(std::string_view text);
// `text` with each such character written as \xNN or \uNNNN.
std::string printable(std::string_view text);

}  // namespace dsplan
