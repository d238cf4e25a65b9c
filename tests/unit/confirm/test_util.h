// Helpers shared by confirm's tests: scratch directories, file reading, the fixture plan
// and the protocol-following fake workload (tests/workloads/fake_train.py).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "confirm/experiment.h"
#include "confirm/plan.h"
#include "confirm/process.h"

namespace dsplan::test {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed when the object goes away.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "dsplan-confirm-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& rel) const { return (fs::path(path_) / rel).string(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What the reference workload's argument parser makes of an experiment's argv: the values
// of `fields` (Python expressions over the parsed args `a`, with train_gpt and moe_mlp
// imported), printed space-separated. `dir` takes the process's output files.
inline std::string workload_args(const Experiment& e, const std::string& fields, const ScratchDir& dir) {
  std::vector<std::string> argv = {"python3", "-c",
                                   "import sys; sys.path.insert(0, sys.argv[1]); import train_gpt, moe_mlp; "
                                   "a = train_gpt.parse_args(sys.argv[2:]); print(" +
                                       fields + ")",
                                   std::string(DSPLAN_SOURCE_DIR) + "/examples"};
  argv.insert(argv.end(), e.argv.begin() + 2, e.argv.end());  // drop python3 and the script
  auto r = run_process(argv, dir / "out", dir / "err", {});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << slurp(dir / "err");
  return slurp(dir / "out");
}

inline std::string fake_workload() { return std::string(DSPLAN_SOURCE_DIR) + "/tests/workloads/fake_train.py"; }

inline Plan tiny_plan() {
  const std::string file = std::string(DSPLAN_TEST_DATA) + "/confirm/plan_tiny.json";
  auto j = Json::parse(slurp(file));
  auto plan = parse_plan(j, file);
  if (!plan) {
    ADD_FAILURE() << plan.errors().front().to_string();
    return {};
  }
  return *plan;
}

// "python3 fake_train.py --deepspeed_config ds.json" plus `extra`.
inline std::vector<std::string> fake_command(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {"python3", fake_workload(), "--deepspeed_config", "ds.json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// Whether `pid` is gone (or a zombie nobody reaped yet).
inline bool process_gone(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string pid_s, comm, state;
  stat >> pid_s >> comm >> state;
  return state == "Z" || state == "X";
}

}  // namespace dsplan::test
