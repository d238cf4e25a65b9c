// Child-process execution for confirm (see process.h). POSIX + Linux prctl.
#include "confirm/process.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dsplan {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Waits up to `seconds` for pid; true (and *status set) when it has been reaped.
bool wait_for(pid_t pid, int* status, double seconds) {
  auto t0 = Clock::now();
  while (true) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    if (seconds >= 0 && since(t0) >= seconds) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void signal_target(pid_t pid, bool group, int sig) {
  if (group) ::killpg(pid, sig);
  else ::kill(pid, sig);
}

int open_log(const std::string& path, std::string& error) {
  if (path.empty()) return -1;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) error = "cannot open " + path + ": " + std::strerror(errno);
  return fd;
}

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(char* const* args, int out_fd, int err_fd, int report_fd, pid_t parent,
                             bool own_group) {
  if (own_group) {
    ::setpgid(0, 0);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
  }
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) _exit(127);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);  // dsplan ignores it (cli/main.cc); the workload gets the default
  if (out_fd >= 0) ::dup2(out_fd, 1);
  if (err_fd >= 0) ::dup2(err_fd, 2);
  ::execvp(args[0], args);
  int e = errno;
  ssize_t ignored = ::write(report_fd, &e, sizeof e);
  (void)ignored;
  _exit(127);
}

void record_status(int status, ProcessResult& r) {
  if (WIFEXITED(status)) {
    r.exited = true;
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
}

}  // namespace

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    default: return "signal " + std::to_string(sig);
  }
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& stdout_path,
                          const std::string& stderr_path, const ProcessLimits& limits,
                          bool inherit_group) {
  ProcessResult res;
  if (argv.empty()) {
    res.error = "empty command";
    return res;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int out_fd = open_log(stdout_path, res.error);
  int err_fd = open_log(stderr_path, res.error);
  int report[2];
  if (!res.error.empty() || ::pipe2(report, O_CLOEXEC) != 0) {
    if (res.error.empty()) res.error = std::string("pipe: ") + std::strerror(errno);
    if (out_fd >= 0) ::close(out_fd);
    if (err_fd >= 0) ::close(err_fd);
    return res;
  }
  const bool group = !inherit_group;
  const pid_t parent = ::getpid();
  const auto t0 = Clock::now();
  pid_t pid = ::fork();
  if (pid == 0) exec_child(args.data(), out_fd, err_fd, report[1], parent, group);
  ::close(report[1]);
  if (out_fd >= 0) ::close(out_fd);
  if (err_fd >= 0) ::close(err_fd);
  if (pid < 0) {
    ::close(report[0]);
    res.error = std::string("fork: ") + std::strerror(errno);
    return res;
  }
  if (group) ::setpgid(pid, pid);  // also in the parent, so killpg works at once

  int exec_errno = 0;
  ssize_t n;
  do n = ::read(report[0], &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  ::close(report[0]);
  int status = 0;
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    wait_for(pid, &status, -1);
    res.error = argv[0] + ": " + std::strerror(exec_errno);
    return res;
  }
  res.started = true;

  while (!wait_for(pid, &status, 0.05)) {
    const bool timeout = limits.timeout_s > 0 && since(t0) >= limits.timeout_s;
    const bool cancel = limits.cancel && limits.cancel->load();
    if (!timeout && !cancel) continue;
    res.timed_out = timeout && !cancel;
    res.cancelled = cancel;
    signal_target(pid, group, SIGTERM);
    if (!wait_for(pid, &status, limits.kill_grace_s)) {
      signal_target(pid, group, SIGKILL);
      wait_for(pid, &status, -1);
    }
    break;
  }
  // Whatever the launcher left behind in its group goes with it.
  if (group) ::killpg(pid, SIGKILL);
  record_status(status, res);
  res.seconds = since(t0);
  return res;
}

std::string read_log_tail(const std::string& path, std::int64_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  in.seekg(size > max_bytes ? size - max_bytes : 0);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

CapturedRun run_captured(const std::vector<std::string>& argv, const ProcessLimits& limits, bool merge) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // One capture at a time per process (each removes its files before returning).
  const std::string stem =
      (fs::temp_directory_path(ec) / ("dsplan-capture-" + std::to_string(::getpid()))).string();
  const std::string out = stem + ".out", err = merge ? out : stem + ".err";
  CapturedRun r;
  r.result = run_process(argv, out, err, limits);
  r.out = read_log_tail(out);
  if (!merge) r.err = read_log_tail(err);
  fs::remove(out, ec);
  fs::remove(err, ec);
  return r;
}

}  // namespace dsplan
