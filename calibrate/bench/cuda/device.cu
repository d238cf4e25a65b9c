// Provenance of a calibration run: the GPU as the driver names it, its SM count, driver,
// runtime, cuBLAS and NCCL versions, the host name and the UTC date.
#include <unistd.h>

#include <ctime>

#include "calibrate/bench/cuda/cuda_bench.h"

namespace dsplan::cuda {
namespace {

std::string cuda_version(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string nccl_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
         std::to_string(v % 100);
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

Provenance local_provenance(int device, int gpu_count, int nodes) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  int driver = 0, runtime = 0;
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  Provenance p;
  p.kind = "measurement";
  p.gpu_name = prop.name;
  p.gpu_count = gpu_count;
  p.nodes = nodes;
  p.sm_count = prop.multiProcessorCount;
  p.driver = cuda_version(driver);
  p.cuda_runtime = cuda_version(runtime);
  p.cublas = cublas_version();
  p.nccl = nccl_version();
  p.host = host_name();
  p.date = utc_now();
  return p;
}

}  // namespace dsplan::cuda
