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

}  // namespace dsplan
