// Formatting of diagnostics and the edit-distance suggestion behind "did you mean".
#include "core/diagnostic.h"

#include <algorithm>

namespace dsplan {

std::string Diagnostic::to_string() const {
  std::string s;
  if (!file.empty()) s += file + ": ";
  if (!json_path.empty()) s += json_path + ": ";
  s += message;
  if (!hint.empty()) s += " (" + hint + ")";
  return s;
}

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  int best_d = 1 << 30;
  for (const auto& c : candidates) {
    int d = edit_distance(word, c);
    if (d < best_d) { best_d = d; best = c; }
  }
  // Accept a suggestion only when it is plausibly a typo: a third of the word, at least 2.
  int limit = std::max<int>(2, static_cast<int>(word.size()) / 3);
  if (best && best_d <= limit) return best;
  return std::nullopt;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += sep;
    s += items[i];
  }
  return s;
}

namespace {

// Length in bytes of the unprintable character at text[i], or 0 when it is printable.
std::size_t unprintable_at(std::string_view t, std::size_t i) {
  const auto b = [&](std::size_t k) { return k < t.size() ? static_cast<unsigned char>(t[k]) : 0u; };
  const unsigned c = b(i);
  if (c < 0x20 || c == 0x7F) return 1;
  if (c == 0xC2 && b(i + 1) >= 0x80 && b(i + 1) <= 0x9F) return 2;                      // C1 controls
  if (c == 0xE2 && b(i + 1) == 0x80 && b(i + 2) >= 0xA8 && b(i + 2) <= 0xAE) return 3;  // U+2028-202E
  if (c == 0xE2 && b(i + 1) == 0x81 && b(i + 2) >= 0xA6 && b(i + 2) <= 0xA9) return 3;  // U+2066-2069
  return 0;
}

}  // namespace

std::size_t first_unprintable(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i)
    if (unprintable_at(text, i) > 0) return i;
  return std::string_view::npos;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  static const char* hex = "0123456789abcdef";
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = unprintable_at(text, i);
    if (n == 0) {
      out += text[i++];
      continue;
    }
    unsigned cp = static_cast<unsigned char>(text[i]);
    if (n == 2) cp = ((cp & 0x1F) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3F);
    if (n == 3)
      cp = ((cp & 0x0F) << 12) | ((static_cast<unsigned char>(text[i + 1]) & 0x3F) << 6) |
           (static_cast<unsigned char>(text[i + 2]) & 0x3F);
    if (cp < 0x100) {
      out += "\\x";
    } else {
      out += "\\u";
      out += hex[(cp >> 12) & 0xF];
      out += hex[(cp >> 8) & 0xF];
    }
    out += hex[(cp >> 4) & 0xF];
    out += hex[cp & 0xF];
    i += n;
  }
  return out;
}

}  // namespace dsplan
