// How long a training run of a given token count takes with a configuration (estimate
// --train-tokens): steps, days and GPU-hours at the predicted step, and the days the middle
// 80% of published and real runs of the configuration's regime would make of it (their
// measured / predicted step, estimator/search/evidence.h). Arithmetic on the plan only.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "cli/estimate_options.h"
#include "estimator/search/evidence.h"

namespace dsplan::cli {

namespace {

// 4730.4 -> "4,730".
std::string thousands(double v) {
  std::string digits = std::to_string(static_cast<long long>(std::llround(v)));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

std::string fixed(double v, int precision) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(precision);
  s << v;
  return s.str();
}

// A duration given in days, in the unit that suits it: "45 minutes", "7.5 hours", "18.8 days".
std::string duration_text(double days) {
  const double hours = days * 24.0;
  if (hours < 1) return fixed(hours * 60.0, hours * 60.0 < 10 ? 1 : 0) + " minutes";
  if (days < 1) return fixed(hours, 1) + " hours";
  return fixed(days, days < 100 ? 1 : 0) + " days";
}

// The low and high durations of a range in the unit of the low one: "19.2-23.1 days".
std::string duration_range(double lo_days, double hi_days) {
  const std::string lo = duration_text(lo_days), unit = lo.substr(lo.find(' '));
  const double scale = unit == " minutes" ? 1440.0 : unit == " hours" ? 24.0 : 1.0;
  const double hi = hi_days * scale;
  return lo.substr(0, lo.find(' ')) + "-" +
         fixed(hi, hi < 10                          ? 1
                   : hi < 100 && unit != " minutes" ? 1
                                                    : 0) +
         unit;
}

}  // namespace

std::optional<Training> training_of(const Evaluation& e, double tokens) {
  if (!(tokens > 0) || !(e.time.step.v > 0) || !(e.tokens_per_s > 0)) return std::nullopt;
  Training t;
  t.gpus = e.cfg.gpus();
  t.steps = std::ceil(tokens / (static_cast<double>(e.cfg.global_batch()) * e.cfg.seq_len));
  t.days = tokens / e.tokens_per_s / 86400.0;
  t.gpu_hours = t.days * 24.0 * t.gpus;
  return t;
}

std::string token_label(double tokens) {
  const char* suffix[] = {"", "K", "M", "B", "T"};
  int k = 0;
  while (k < 4 && tokens >= 1000.0) tokens /= 1000.0, ++k;
  std::string s = fixed(tokens, tokens < 10 && std::fabs(tokens - std::round(tokens)) > 1e-9 ? 1 : 0);
  if (k == 4 && tokens >= 1000.0) s = fixed(tokens, 0);  // beyond 999T: still in T
  return s + suffix[k];
}

std::optional<double> parse_token_count(const std::string& text) {
  if (text.empty()) return std::nullopt;
  double scale = 1;
  std::string number = text;
  switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K':
      scale = 1e3;
      break;
    case 'M':
      scale = 1e6;
      break;
    case 'B':
      scale = 1e9;
      break;
    case 'T':
      scale = 1e12;
      break;
    default:
      break;
  }
  if (scale != 1) number.pop_back();
  if (number.empty() || !(std::isdigit(static_cast<unsigned char>(number.front())) || number.front() == '.'))
    return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end) * scale;
  if (end != number.c_str() + number.size() || !std::isfinite(v) || v < 1 || v > kMaxTrainTokens)
    return std::nullopt;
  return v;
}

Json training_json(const Evaluation& e, double tokens, GpuArch arch) {
  const auto t = training_of(e, tokens);
  if (!t) return Json();
  Json j{{"tokens", tokens},
         {"steps", t->steps},
         {"gpus", t->gpus},
         {"days", t->days},
         {"gpu_hours", t->gpu_hours}};
  if (const auto b = evidence_band(evidence_regime(e, arch)))
    j["days_middle_80"] = {t->days * b->p10, t->days * b->p90};
  return j;
}

std::string training_text(const Evaluation& e, double tokens, GpuArch arch) {
  const auto t = training_of(e, tokens);
  if (!t) return "";
  const std::string gpu_hours = t->gpu_hours < 1    ? fixed(t->gpu_hours, 2)
                                : t->gpu_hours < 10 ? fixed(t->gpu_hours, 1)
                                                    : thousands(t->gpu_hours);
  std::string s = thousands(t->steps) + " steps, " + duration_text(t->days) + " on " +
                  std::to_string(t->gpus) + " GPUs (" + gpu_hours + " GPU-hours) at the predicted step";
  if (const auto b = evidence_band(evidence_regime(e, arch)))
    s += "; " + duration_range(t->days * b->p10, t->days * b->p90) +
         " at what the middle 80% of runs like it measured";
  else
    s += "; no run of its kind has been checked";
  return s;
}

}  // namespace dsplan::cli
