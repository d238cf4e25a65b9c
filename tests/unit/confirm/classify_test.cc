// Outcome classification rules and the child-process runner (real subprocesses).
#include "confirm/classify.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "confirm/process.h"
#include "test_util.h"

namespace dsplan {
namespace {

ProcessResult exited(int code) {
  ProcessResult r;
  r.started = r.exited = true;
  r.exit_code = code;
  return r;
}

const std::string kMetrics = R"({"throughput": 12.5, "latency": 80000, "FLOPS_per_gpu": 1e12})";
// Samples per step of the classified runs: kMetrics' step is 8 / 12.5 = 0.64 s.
constexpr std::int64_t kBatch = 8;

TEST(Classify, OkNeedsExitZeroAndThroughput) {
  EXPECT_EQ(classify(exited(0), kMetrics, "", "", kBatch).outcome, Outcome::ok);
  auto none = classify(exited(0), std::nullopt, "", "", kBatch);
  EXPECT_EQ(none.outcome, Outcome::failed);
  EXPECT_EQ(none.reason, "no metrics written");
  EXPECT_EQ(classify(exited(0), R"({"latency": 3})", "", "", kBatch).outcome, Outcome::failed);
  EXPECT_EQ(classify(exited(0), "not json", "", "", kBatch).outcome, Outcome::failed);
  // A throughput no run reaches is a broken file, not a measurement (1e308 from a fuzzed
  // workload overflowed the residual model's corrected throughput to infinity).
  for (const char* absurd : {R"({"throughput": 1e308})", R"({"throughput": 2e9})", R"({"throughput": -5})"}) {
    auto c = classify(exited(0), std::string(absurd), "", "", kBatch);
    EXPECT_EQ(c.outcome, Outcome::failed) << absurd;
    EXPECT_NE(c.reason.find("(0, 1e9)"), std::string::npos) << c.reason;
  }
  // Metrics from a run that then failed do not make it ok.
  EXPECT_EQ(classify(exited(1), kMetrics, "", "", kBatch).outcome, Outcome::failed);
}

TEST(Classify, TheWordErrorIsNotAFailure) {
  auto c =
      classify(exited(0), kMetrics, "error: something harmless\nRuntimeError mentioned\n", "ERROR", kBatch);
  EXPECT_EQ(c.outcome, Outcome::ok);
}

TEST(Classify, OutOfMemorySignatures) {
  for (const char* msg : {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                          "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate",
                          "torch.cuda.OutOfMemoryError: boom"}) {
    auto c = classify(exited(1), std::nullopt, std::string("Traceback\n") + msg + "\n", "", kBatch);
    EXPECT_EQ(c.outcome, Outcome::oom) << msg;
  }
  // A crash whose log does not mention memory is a failure, with the stderr tail.
  auto c = classify(exited(1), std::nullopt, "line 1\nValueError: bad shard\n", "", kBatch);
  EXPECT_EQ(c.outcome, Outcome::failed);
  EXPECT_EQ(c.reason, "exit status 1");
  EXPECT_EQ(c.tail, "line 1\nValueError: bad shard");
}

TEST(Classify, TimeoutSignalAndNotStarted) {
  ProcessResult t = exited(0);
  t.timed_out = true;
  EXPECT_EQ(classify(t, kMetrics, "", "", kBatch).outcome, Outcome::timeout);
  ProcessResult s;
  s.started = true;
  s.signal = 11;
  EXPECT_EQ(classify(s, std::nullopt, "", "", kBatch).reason, "killed by SIGSEGV");
  ProcessResult n;
  n.error = "nope: No such file or directory";
  EXPECT_EQ(classify(n, std::nullopt, "", "", kBatch).reason,
            "could not start: nope: No such file or directory");
  ProcessResult cancelled = exited(0);
  cancelled.cancelled = true;
  EXPECT_EQ(classify(cancelled, kMetrics, "", "", kBatch).outcome, Outcome::interrupted);
}

TEST(Classify, TailKeepsLastNonEmptyLines) {
  EXPECT_EQ(tail_lines("a\nb\n\nc\n\n", 2), "b\nc");
  EXPECT_EQ(tail_lines("", 3), "");
}

TEST(Process, ExitCodeAndLogs) {
  test::ScratchDir d;
  auto r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"}, d / "o.log", d / "e.log", {});
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(test::slurp(d / "o.log"), "out\n");
  EXPECT_EQ(test::slurp(d / "e.log"), "err\n");
}

TEST(Process, MissingProgramIsReportedNotRun) {
  auto r = run_process({"/nonexistent/dsplan-no-such-program"}, "", "", {});
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.error.find("No such file"), std::string::npos) << r.error;
}

TEST(Process, TimeoutKillsTheWholeGroup) {
  test::ScratchDir d;
  const std::string pidfile = d / "pid";
  // The shell starts a grandchild that ignores nothing and would outlive a plain kill.
  ProcessLimits lim;
  lim.timeout_s = 0.3;
  lim.kill_grace_s = 0.5;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_process({"sh", "-c", "sleep 30 & echo $! > " + pidfile + "; wait"}, d / "o", d / "e", lim);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(s, 5.0);
  int pid = std::stoi(test::slurp(pidfile));
  for (int i = 0; i < 50 && !test::process_gone(pid); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(test::process_gone(pid)) << "grandchild " << pid << " survived";
}

TEST(Process, CancelStopsTheRun) {
  test::ScratchDir d;
  std::atomic<bool> cancel{false};
  ProcessLimits lim;
  lim.cancel = &cancel;
  lim.kill_grace_s = 0.5;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  auto r = run_process({"sleep", "30"}, d / "o", d / "e", lim);
  t.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_LT(r.seconds, 5.0);
}

}  // namespace
}  // namespace dsplan

namespace dsplan {
namespace {

// DeepSpeed words its fp16 overflow skip two ways (ZeRO and FP16_Optimizer); both count,
// and nothing else does.
TEST(Classify, CountsFp16OverflowSkips) {
  EXPECT_EQ(count_overflow_skips("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, "
                                 "reducing to 32768\nstep 2\n[deepspeed] OVERFLOW! Rank 0 Skipping step.\n"),
            2);
  EXPECT_EQ(count_overflow_skips("Overflow detected. Skipping step. Attempted loss scale: 4096\n"), 1);
  EXPECT_EQ(count_overflow_skips("loss 2.31, loss scale 65536\n"), 0);
}

}  // namespace
}  // namespace dsplan
