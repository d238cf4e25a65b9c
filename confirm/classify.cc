// Outcome classification of confirm experiments (see classify.h).
#include "confirm/classify.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

namespace dsplan {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::ok: return "ok";
    case Outcome::oom: return "oom";
    case Outcome::timeout: return "timeout";
    case Outcome::failed: return "failed";
    case Outcome::interrupted: return "interrupted";
  }
  return "failed";
}

std::optional<Outcome> parse_outcome(const std::string& s) {
  for (Outcome o : {Outcome::ok, Outcome::oom, Outcome::timeout, Outcome::failed, Outcome::interrupted})
    if (s == outcome_name(o)) return o;
  return std::nullopt;
}

std::optional<Measured> parse_metrics(const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto number = [&](const char* key, double fallback) {
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : fallback;
  };
  Measured m;
  m.throughput = number("throughput", 0);
  m.latency = number("latency", 0);
  m.flops_per_gpu = number("FLOPS_per_gpu", 0);
  m.peak_memory_gib = number("peak_memory_GiB", -1);
  // A throughput no training run reaches (over a billion samples/s, or infinite) is a broken
  // metrics file, not a measurement: it would poison the residual model (a fuzzed 1e308
  // made its corrected throughput overflow to infinity).
  if (!(m.throughput > 0 && m.throughput < 1e9)) return std::nullopt;
  return m;
}

std::string measurement_problem(const Measured& m, std::int64_t global_batch, double peak_samples_per_s) {
  char buf[256];
  if (!std::isfinite(m.throughput) || !(m.throughput > 0)) {
    std::snprintf(buf, sizeof buf, "metrics.json's throughput %g samples/s is not a positive number",
                  m.throughput);
    return buf;
  }
  if (peak_samples_per_s > 0 && m.throughput > peak_samples_per_s) {
    std::snprintf(buf, sizeof buf,
                  "metrics.json's throughput %g samples/s would be %.0f%% of the GPUs' dense peak in model "
                  "FLOPs: faster than the hardware runs",
                  m.throughput, 100 * m.throughput / peak_samples_per_s);
    return buf;
  }
  const double step_s = static_cast<double>(global_batch) / m.throughput;
  if (global_batch >= 1 && step_s >= kMinMeasuredStepS && step_s <= kMaxMeasuredStepS) return "";
  std::snprintf(buf, sizeof buf,
                "metrics.json's throughput %g samples/s means a step of %g s for %lld samples, outside "
                "the physical range [%g, %g] s",
                m.throughput, step_s, static_cast<long long>(global_batch), kMinMeasuredStepS,
                kMaxMeasuredStepS);
  return buf;
}

// Messages PyTorch, the CUDA caching allocator and cuBLAS print when device memory runs out.
std::string find_oom_signature(const std::string& text) {
  static const std::array<const char*, 5> signatures = {
      "CUDA out of memory", "torch.OutOfMemoryError", "torch.cuda.OutOfMemoryError",
      "CUBLAS_STATUS_ALLOC_FAILED", "CUDA error: out of memory"};
  for (const char* s : signatures)
    if (text.find(s) != std::string::npos) return s;
  return "";
}

std::string tail_lines(const std::string& text, int lines) {
  std::vector<std::string> out;
  size_t end = text.size();
  while (end > 0 && static_cast<int>(out.size()) < lines) {
    size_t start = text.rfind('\n', end - 1);
    size_t from = start == std::string::npos ? 0 : start + 1;
    std::string line = text.substr(from, end - from);
    if (line.find_first_not_of(" \t\r") != std::string::npos) out.push_back(line);
    if (start == std::string::npos) break;
    end = start;
  }
  std::string joined;
  for (auto it = out.rbegin(); it != out.rend(); ++it) joined += (joined.empty() ? "" : "\n") + *it;
  return joined;
}

int count_overflow_skips(const std::string& text) {
  int n = 0;
  for (std::size_t at = text.find("Skipping step"); at != std::string::npos; at = text.find("Skipping step", at + 1))
    ++n;
  return n;
}

Classification classify(const ProcessResult& pr, const std::optional<std::string>& metrics_text,
                        const std::string& stderr_text, const std::string& stdout_text,
                        std::int64_t global_batch, double peak_samples_per_s) {
  Classification c;
  c.tail = tail_lines(stderr_text, 8);
  if (pr.cancelled) {
    c.outcome = Outcome::interrupted;
    c.reason = "interrupted";
    return c;
  }
  if (pr.timed_out) {
    c.outcome = Outcome::timeout;
    c.reason = "no result within " + std::to_string(static_cast<long>(pr.seconds + 0.5)) + " s";
    return c;
  }
  std::optional<Measured> m = metrics_text ? parse_metrics(*metrics_text) : std::nullopt;
  const std::string absurd = m ? measurement_problem(*m, global_batch, peak_samples_per_s) : "";
  if (pr.started && pr.exited && pr.exit_code == 0 && m && !absurd.empty()) {
    c.outcome = Outcome::failed;  // a broken metrics file, not a measurement
    c.reason = absurd;
    return c;
  }
  if (pr.started && pr.exited && pr.exit_code == 0 && m) {
    c.outcome = Outcome::ok;
    c.tail.clear();
    c.overflow_skips = count_overflow_skips(stdout_text) + count_overflow_skips(stderr_text);
    return c;
  }
  std::string oom = find_oom_signature(stderr_text);
  if (oom.empty()) oom = find_oom_signature(stdout_text);
  if (!oom.empty()) {
    c.outcome = Outcome::oom;
    c.reason = "out of memory (\"" + oom + "\")";
    return c;
  }
  c.outcome = Outcome::failed;
  if (!pr.started) c.reason = "could not start: " + pr.error;
  else if (!pr.exited) c.reason = "killed by " + signal_name(pr.signal);
  else if (pr.exit_code == 139) c.reason = "exit status 139 (segmentation fault)";
  else if (pr.exit_code != 0) c.reason = "exit status " + std::to_string(pr.exit_code);
  else if (!metrics_text) c.reason = "no metrics written";
  else
    c.reason = "metrics.json has no \"throughput\" in (0, 1e9) samples/s";
  return c;
}

}  // namespace dsplan
