// The Bench of a CUDA build: the CUDA benchmarks live in the shared library
// libdsplan_bench_cuda.so, loaded with dlopen only when a benchmark runs. So `dsplan
// estimate` (and every other command) starts without loading cuBLAS, cuBLASLt, NCCL and the
// CUDA runtime (about a gigabyte of libraries: seconds on a cold start), and a machine
// without those libraries can still run everything but `calibrate`. Compiled instead of
// bench_unavailable.cc when CUDA is found. The library is looked for next to the running
// binary, then where the build put it, then on the loader's search path.
#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "calibrate/bench/bench.h"

namespace dsplan {
namespace {

constexpr const char* kLibrary = "libdsplan_bench_cuda.so";

class MissingBench final : public Bench {
 public:
  explicit MissingBench(std::string why) : why_(std::move(why)) {}
  Expected<DeviceInfo> probe() override { return error(); }
  Expected<GemmRecord> gemm(const GemmCase&) override { return error(); }
  Expected<BandwidthRecord> bandwidth(BandwidthKind, double, const Repeats&) override { return error(); }
  Expected<CollectiveRecord> collective(Collective, CommScope, double, const Repeats&) override {
    return error();
  }

 private:
  Diagnostic error() const {
    return Diagnostic{"", "", "the CUDA benchmarks could not be loaded: " + why_,
                      std::string(kLibrary) +
                          " must sit next to the dsplan binary and find cuBLAS, cuBLASLt, NCCL and the "
                          "CUDA runtime (LD_LIBRARY_PATH); 'dsplan calibrate fit --records FILE' refits "
                          "saved records without a GPU"};
  }
  std::string why_;
};

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((exe.parent_path() / kLibrary).string());
  out.push_back(DSPLAN_BENCH_CUDA_PATH);
  out.push_back(kLibrary);
  return out;
}

}  // namespace

std::unique_ptr<Bench> make_bench() {
  std::string why;
  for (const auto& path : candidates()) {
    // The handle is never closed: the Bench's code lives in the library.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      if (why.empty() || std::filesystem::exists(path)) why = e ? e : path + ": not loadable";
      continue;
    }
    using Factory = Bench* (*)();
    auto factory = reinterpret_cast<Factory>(dlsym(handle, "dsplan_make_cuda_bench"));
    if (!factory) return std::make_unique<MissingBench>(path + " has no dsplan_make_cuda_bench");
    return std::unique_ptr<Bench>(factory());
  }
  return std::make_unique<MissingBench>(why);
}

}  // namespace dsplan
