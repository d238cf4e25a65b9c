// Running one experiment command as a child process: fork/exec in its own process group
// (so a timeout or Ctrl-C can end the launcher and everything it started), stdout and
// stderr redirected to log files, a wall-clock limit, and cancellation from the caller
// (e.g. a SIGINT handler setting a flag). Ending a run sends SIGTERM to the whole group,
// then SIGKILL after a grace period. Linux: the child also gets PR_SET_PDEATHSIG so that it
// dies if dsplan itself is killed.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace dsplan {

struct ProcessLimits {
  double timeout_s = 0;        // 0 = no limit
  double kill_grace_s = 3;     // SIGTERM -> SIGKILL delay
  const std::atomic<bool>* cancel = nullptr;  // set by the caller to stop the run
};

struct ProcessResult {
  bool started = false;       // false: the program could not be executed (see error)
  std::string error;          // why it did not start, e.g. "python3: No such file or directory"
  int exit_code = -1;         // valid when exited
  bool exited = false;        // normal exit (exit_code valid)
  int signal = 0;             // terminating signal when !exited
  bool timed_out = false;
  bool cancelled = false;
  double seconds = 0;
};

// Runs argv[0] (looked up in PATH) with argv, stdout/stderr appended to the given files
// ("" = inherit the parent's). `inherit_group` keeps the child in dsplan's foreground
// process group (used by --run for the real training, which owns the terminal).
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& stdout_path,
                          const std::string& stderr_path, const ProcessLimits& limits,
                          bool inherit_group = false);

// The last `max_bytes` of a child's log ("" when it cannot be read): a training script can
// write gigabytes, and what a caller looks for (a traceback, out-of-memory messages, the
// profiled steps' overflow notices, a probe's one line of JSON) is at the end.
inline constexpr std::int64_t kMaxLogBytes = 16 << 20;
std::string read_log_tail(const std::string& path, std::int64_t max_bytes = kMaxLogBytes);

// run_process() with stdout and stderr captured through temporary files, which are removed
// again; `merge` writes both into `out` in the order they came. Each keeps its last
// kMaxLogBytes.
struct CapturedRun {
  ProcessResult result;
  std::string out, err;
};
CapturedRun run_captured(const std::vector<std::string>& argv, const ProcessLimits& limits,
                         bool merge = false);

// "SIGSEGV" for 11 etc.; "signal N" for the rest.
std::string signal_name(int sig);

}  // namespace dsplan
