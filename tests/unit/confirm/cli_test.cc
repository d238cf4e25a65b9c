// `dsplan confirm` end to end through the binary: exit statuses, Ctrl-C in the middle of
// a run (the run's whole process group ends, exit 130) and resuming with the same command.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "core/names.h"
#include "test_util.h"

namespace dsplan {
namespace {

using test::ScratchDir;
using test::slurp;
namespace fs = std::filesystem;

// Starts dsplan with `args` (stdout/stderr to files in `d`), returns its pid.
pid_t start_dsplan(const ScratchDir& d, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {DSPLAN_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargs;
  for (auto& a : argv) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  const std::string out = d / "out.txt", err = d / "err.txt";
  pid_t pid = fork();
  if (pid == 0) {
    ::chdir(d.path().c_str());
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execv(cargs[0], cargs.data());
    _exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_dsplan(const ScratchDir& d, const std::vector<std::string>& args) {
  return wait_exit(start_dsplan(d, args));
}

std::vector<std::string> confirm_args(const ScratchDir& d, const std::vector<std::string>& workload_flags) {
  std::vector<std::string> a = {"confirm", "--plan", std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json",
                                "--top", "5", "--timeout", "20", "--results-dir", d / "r", "--exps-dir", d / "e",
                                "--", "python3", test::fake_workload(), "--deepspeed_config", "ds.json"};
  a.insert(a.end(), workload_flags.begin(), workload_flags.end());
  return a;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(ConfirmCli, InterruptKillsTheRunAndTheSameCommandResumes) {
  ScratchDir d;
  std::ofstream(d / "rules") << "z1_mbs2=slow\n";
  auto args = confirm_args(d, {"--rules-file", d / "rules", "--sleep", "60", "--pid-file", d / "pid"});
  pid_t pid = start_dsplan(d, args);
  const std::string log = d / "r/z1_tp1_pp1_gas1_tmbspg2/stdout.log";
  for (int i = 0; i < 1500 && slurp(log).find("mode=slow") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_NE(slurp(log).find("mode=slow"), std::string::npos) << slurp(d / "err.txt");
  const int workload = std::stoi(slurp(d / "pid"));
  ::kill(pid, SIGINT);
  EXPECT_EQ(wait_exit(pid), 130) << slurp(d / "err.txt");
  for (int i = 0; i < 100 && !test::process_gone(workload); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(test::process_gone(workload));
  EXPECT_NE(slurp(d / "out.txt").find("run the same command again to resume"), std::string::npos);

  fs::remove(d / "rules");
  EXPECT_EQ(run_dsplan(d, args), 0) << slurp(d / "err.txt");
  std::string out = slurp(d / "out.txt");
  EXPECT_EQ(count(out, "(reused)"), 2) << out;
  EXPECT_EQ(count(out, "/5] "), 5) << out;
  EXPECT_NE(out.find("| experiment | outcome | pred samples/s | meas samples/s |"), std::string::npos);
  EXPECT_TRUE(fs::exists(d / "r/ds_config_optimal.json"));
  EXPECT_TRUE(fs::exists(d / "r/cmd_optimal.txt"));
}

TEST(ConfirmCli, NothingSucceedsExitsOneAndListsFailures) {
  ScratchDir d;
  auto args = confirm_args(d, {"--mode", "oom"});
  args[4] = "2";  // --top 2
  EXPECT_EQ(run_dsplan(d, args), 1);
  std::string err = slurp(d / "err.txt");
  EXPECT_NE(err.find("No configuration succeeded"), std::string::npos) << err;
  EXPECT_EQ(count(err, ": oom - out of memory"), 2) << err;
  EXPECT_FALSE(fs::exists(d / "r/ds_config_optimal.json"));
}

TEST(ConfirmCli, BadInputExitsTwoWithoutOutputFiles) {
  ScratchDir d;
  auto args = confirm_args(d, {});
  args[4] = "0";  // --top 0
  EXPECT_EQ(run_dsplan(d, args), 2);
  EXPECT_NE(slurp(d / "err.txt").find("--top"), std::string::npos);
  EXPECT_EQ(run_dsplan(d, {"confirm", "--plan", d / "missing.json", "--results-dir", d / "r"}), 2);
  EXPECT_EQ(run_dsplan(d, {"confirm", "--plan", std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json",
                           "--results-dir", d / "r", "--arg-map", "mbs", "--", "python3", "x.py",
                           "--deepspeed", "c.json"}),
            2);
  EXPECT_NE(slurp(d / "err.txt").find("is not KEY=FLAG"), std::string::npos);
  EXPECT_EQ(run_dsplan(d, {"confirm", "--results-dir", d / "r"}), 2);  // neither --plan nor --model
  const std::string plan = std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json";
  EXPECT_EQ(run_dsplan(d, {"confirm", "--plan", plan, "--model", "gpt2", "--results-dir", d / "r"}), 2);
  EXPECT_NE(slurp(d / "err.txt").find("cannot be combined with --model"), std::string::npos);
  std::ofstream(d / "a_file") << "x";
  EXPECT_EQ(run_dsplan(d, {"confirm", "--plan", plan, "--results-dir", d / "a_file", "--", "python3", "x.py",
                           "--deepspeed", "c.json"}),
            2);
  EXPECT_NE(slurp(d / "err.txt").find("--results-dir: exists and is not a folder"), std::string::npos);
  EXPECT_EQ(run_dsplan(d, {"confirm", "--plan", plan, "--exps-dir", "/tmp/..", "--results-dir", d / "r", "--",
                           "python3", "x.py", "--deepspeed", "c.json"}),
            2);
  EXPECT_NE(slurp(d / "err.txt").find("--exps-dir: is the filesystem root"), std::string::npos);
  EXPECT_TRUE(slurp(d / "out.txt").empty());  // nothing printed before the error
  EXPECT_FALSE(fs::exists(d / "r"));
  EXPECT_FALSE(fs::exists(d / "autotuning_results"));
}

// Resuming from a results folder whose exp.json was hand-edited into nonsense is exit 2 with
// one line on an empty stdout (it was "internal error: [json.exception...]" after the
// header line, found by fuzzing).
TEST(ConfirmCli, DamagedResultsFolderIsACleanError) {
  ScratchDir d;
  auto args = confirm_args(d, {});
  args[4] = "1";  // --top 1
  ASSERT_EQ(run_dsplan(d, args), 0) << slurp(d / "err.txt");
  std::string exp;
  for (const auto& e : fs::directory_iterator(d / "r"))
    if (fs::exists(e.path() / "exp.json")) exp = (e.path() / "exp.json").string();
  ASSERT_FALSE(exp.empty());
  Json doc = Json::parse(slurp(exp));
  doc["dsplan"] = "x";  // an object in what confirm writes
  std::ofstream(exp) << doc.dump();
  EXPECT_EQ(run_dsplan(d, args), 2);
  EXPECT_NE(slurp(d / "err.txt").find("cannot resume from the results folder"), std::string::npos)
      << slurp(d / "err.txt");
  EXPECT_EQ(slurp(d / "err.txt").find("json.exception"), std::string::npos);
  EXPECT_TRUE(slurp(d / "out.txt").empty()) << slurp(d / "out.txt");
}

// With the reference workload (no command after '--'), confirm first asks python3 whether
// torch imports and sees a GPU. A python3 on PATH that answers like a machine without torch
// (exit 4 with the import error), then like one without a GPU (exit 3), gets exit 2 and one
// line saying which, before any folder is made or experiment launched.
// Puts BIN (made here; a test writes a fake python3 in it) first on PATH until it goes out
// of scope.
class PathPrefix {
 public:
  explicit PathPrefix(const fs::path& bin) {
    fs::create_directories(bin);
    const char* old_path = std::getenv("PATH");
    saved_ = old_path ? old_path : "";
    ::setenv("PATH", bin.string().append(":").append(saved_).c_str(), 1);
  }
  ~PathPrefix() { ::setenv("PATH", saved_.c_str(), 1); }

 private:
  std::string saved_;
};

TEST(ConfirmCli, ReferenceWorkloadNeedsTorchAndAGpuFirst) {
  ScratchDir d;
  const PathPrefix path(d / "bin");
  const std::vector<std::string> args = {
      "confirm", "--plan",     std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json",
      "--top",   "1",          "--results-dir",
      d / "r",   "--exps-dir", d / "e"};
  for (const auto& [code, want] : std::vector<std::pair<int, std::string>>{
           {4, "cannot import (No module named 'torch')"}, {3, "no usable GPU"}}) {
    {
      std::ofstream py(d / "bin/python3");
      py << "#!/bin/sh\necho \"No module named 'torch'\"\nexit " << code << "\n";
    }
    fs::permissions(d / "bin/python3", fs::perms::owner_all);
    EXPECT_EQ(run_dsplan(d, args), 2) << code;
    const std::string err = slurp(d / "err.txt");
    EXPECT_NE(err.find(want), std::string::npos) << err;
    EXPECT_EQ(err.find("Traceback"), std::string::npos) << err;
    EXPECT_TRUE(slurp(d / "out.txt").empty());
    EXPECT_FALSE(fs::exists(d / "r"));
    EXPECT_FALSE(fs::exists(d / "e"));
  }
}

// A plan priced as DeepSpeed needs DeepSpeed: without it the workload would train PyTorch's
// equivalents and confirm would compare them against the DeepSpeed prediction. The fake
// python3 has no deepspeed (exit 5 when the check imports it) and reports no GPU otherwise
// (exit 3): a plan of DDP configurations never asks for deepspeed, so the same fake stops
// it at the GPU check instead, with no word of DeepSpeed.
TEST(ConfirmCli, DeepSpeedPlanNeedsDeepSpeed) {
  ScratchDir d;
  const PathPrefix path(d / "bin");
  {
    std::ofstream py(d / "bin/python3");
    py << "#!/bin/sh\ncase \"$2\" in *'import deepspeed'*) echo \"No module named 'deepspeed'\"; exit 5;; "
          "*) echo 'checked'; exit 3;; esac\n";
  }
  fs::permissions(d / "bin/python3", fs::perms::owner_all);
  const std::string plan = std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json";
  auto args = [&](const std::string& p) {
    return std::vector<std::string>{"confirm", "--plan",     p,      "--top", "1", "--results-dir",
                                    d / "r",   "--exps-dir", d / "e"};
  };
  EXPECT_EQ(run_dsplan(d, args(plan)), 2);
  std::string err = slurp(d / "err.txt");
  EXPECT_NE(err.find("cannot import deepspeed (No module named 'deepspeed')"), std::string::npos) << err;
  EXPECT_NE(err.find("--framework ddp"), std::string::npos) << err;
  EXPECT_TRUE(slurp(d / "out.txt").empty());
  EXPECT_FALSE(fs::exists(d / "r"));

  // The same plan with every configuration priced as DDP at ZeRO 0.
  std::string text = slurp(plan);
  for (size_t at; (at = text.find("\"deepspeed\"")) != std::string::npos;) text.replace(at, 11, "\"ddp\"");
  ASSERT_EQ(text.find("deepspeed"), std::string::npos);
  std::ofstream(d / "plan_ddp.json") << text;
  EXPECT_EQ(run_dsplan(d, args(d / "plan_ddp.json")), 2);
  err = slurp(d / "err.txt");
  EXPECT_NE(err.find("no usable GPU"), std::string::npos) << err;
  EXPECT_EQ(err.find("deepspeed"), std::string::npos) << err;
}

// Bad plans and profile steps are exit 2 with one line naming the field, on an empty stdout
// and without folders: an impossible layout (tp 3 with 4 heads on 2 GPUs), an unknown GPU,
// an empty configs list (was exit 1, "no configuration in the plan fits") and
// --start-profile-step -1 (was blamed on --end-profile-step).
TEST(ConfirmCli, ImpossiblePlansAndProfileStepsAreBadInput) {
  ScratchDir d;
  const Json plan = Json::parse(slurp(std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json"));
  auto refused = [&](const std::vector<std::string>& args, const std::string& want) {
    EXPECT_EQ(run_dsplan(d, args), 2) << want;
    const std::string err = slurp(d / "err.txt");
    EXPECT_NE(err.find(want), std::string::npos) << err;
    EXPECT_EQ(count(err, "\n"), 1) << err;
    EXPECT_TRUE(slurp(d / "out.txt").empty());
    EXPECT_FALSE(fs::exists(d / "r"));
  };
  auto with_plan = [&](const Json& p) {
    std::ofstream(d / "bad.json") << p.dump();
    auto args = confirm_args(d, {});
    args[2] = d / "bad.json";
    return args;
  };
  Json tp3 = plan, gpu = plan, empty = plan;
  tp3["configs"][0]["tp"] = 3;
  gpu["hardware"]["gpu"]["name"] = "zzz";
  empty["configs"] = Json::array();
  refused(with_plan(tp3),
          "bad.json: /configs/0/tp: tp 3 does not divide the 4 attention heads (allowed: 1, 2,");
  refused(with_plan(gpu), "bad.json: /hardware/gpu/name: unknown GPU preset \"zzz\"");
  refused(with_plan(empty), "bad.json: /configs: is empty");
  auto steps = confirm_args(d, {});
  steps.insert(steps.begin() + 1, {"--start-profile-step", "-1"});
  refused(steps, "--start-profile-step: must be at least 1, got -1");
  EXPECT_EQ(slurp(d / "err.txt").find("--end-profile-step"), std::string::npos);
  steps = confirm_args(d, {});
  steps.insert(steps.begin() + 1, {"--start-profile-step", "4", "--end-profile-step", "2"});
  refused(steps, "--end-profile-step: must be at least --start-profile-step (4), got 2");
}

// Plans that estimate writes pass confirm's structural checks: DeepSpeed with TP and a
// global batch, and Megatron with interleaved pipeline stages.
TEST(ConfirmCli, EstimatePlansPassThePlanChecks) {
  ScratchDir d;
  const std::vector<std::vector<std::string>> estimates = {
      {"estimate", "--model", "gpt2", "--gpus", "12", "--hw", "dgx-a100", "--global-batch", "480", "--top",
       "30", "--json"},
      {"estimate", "--framework", "megatron", "--model", "gpt-2.7b", "--gpus", "16", "--hw", "dgx-a100",
       "--pp", "2,4", "--vpp", "2", "--gas", "4,8", "--top", "20", "--json"}};
  for (const auto& args : estimates) {
    ASSERT_EQ(run_dsplan(d, args), 0) << slurp(d / "err.txt");
    const Json j = Json::parse(slurp(d / "out.txt"));
    auto plan = parse_plan(j, "estimate");
    ASSERT_TRUE(plan.ok()) << plan.errors().front().to_string();
    EXPECT_GE(plan->candidates.size(), 10u) << args[2];
  }
}

// A configuration the reference workload has no flags for (here context parallelism) is
// refused before anything runs, naming it, when no command is given after '--'.
TEST(ConfirmCli, ConfigurationsTheWorkloadCannotRunAreRefused) {
  ScratchDir d;
  ASSERT_EQ(run_dsplan(d, {"estimate", "--framework", "megatron", "--model", "gpt2", "--gpus", "8", "--cp",
                           "2", "--top", "1", "--json"}),
            0)
      << slurp(d / "err.txt");
  {
    std::ofstream plan(d / "plan.json");
    plan << slurp(d / "out.txt");
  }
  EXPECT_EQ(run_dsplan(d, {"confirm", "--plan", d / "plan.json", "--top", "1", "--results-dir", d / "r",
                           "--exps-dir", d / "e"}),
            2);
  const std::string err = slurp(d / "err.txt");
  EXPECT_NE(err.find("the reference workload cannot run configuration 1"), std::string::npos) << err;
  EXPECT_NE(err.find("context parallelism (cp 2)"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(d / "r"));
}

// The RMSNorm kernels a plan was priced with reach confirm (which passes --eager-rmsnorm
// to the reference workload when they are eager).
TEST(ConfirmCli, PlansKeepTheirRmsNormKernels) {
  ScratchDir d;
  for (const std::string k : {"fused", "eager"}) {
    ASSERT_EQ(run_dsplan(
                  d, {"estimate", "--model", "llama3.2-1b", "--gpus", "1", "--framework", "ddp", "--zero",
                      "0", "--seq", "2048", "--hw", "h100-80gb", "--norm-kernel", k, "--top", "2", "--json"}),
              0)
        << slurp(d / "err.txt");
    auto plan = parse_plan(Json::parse(slurp(d / "out.txt")), "estimate");
    ASSERT_TRUE(plan.ok()) << plan.errors().front().to_string();
    EXPECT_EQ(name(plan->candidates.front().cfg.norm_kernel), k);
  }
}

}  // namespace
}  // namespace dsplan
