// Shared helpers of the CUDA benchmarks: error checks that throw BenchFailure (caught at
// the Bench interface and turned into a Diagnostic, so no exception leaves bench/cuda),
// RAII device/host buffers and events, and per-launch CUDA-event timing with a median.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "core/diagnostic.h"

namespace dsplan::cuda {

struct BenchFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw BenchFailure(std::string(what) + ": " + cudaGetErrorString(e));
}
inline void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw BenchFailure(std::string(what) + ": " + cublasGetStatusString(s));
}
inline void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw BenchFailure(std::string(what) + ": " + ncclGetErrorString(r));
}

// Runs `f`, turning a BenchFailure (or a std::bad_alloc) into a diagnostic.
template <class T, class F>
Expected<T> guarded(F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return Diagnostic{"", "", e.what(), ""};
  }
}

class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    check(cudaMalloc(&p_, bytes ? bytes : 1), "cudaMalloc");
  }
  ~DeviceBuffer() { if (p_) cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return p_; }
  template <class T> T* as() const { return static_cast<T*>(p_); }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t bytes) { check(cudaMallocHost(&p_, bytes), "cudaMallocHost"); }
  ~PinnedBuffer() { if (p_) cudaFreeHost(p_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

class Event {
 public:
  Event() { check(cudaEventCreate(&e_), "cudaEventCreate"); }
  ~Event() { if (e_) cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& o) noexcept : e_(o.e_) { o.e_ = nullptr; }
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

class Stream {
 public:
  Stream() { check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { if (s_) cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Launches `launch()` warmup times, then `timed` times back to back with an event between
// consecutive launches; returns each launch's duration in microseconds.
template <class F>
std::vector<double> time_launches(cudaStream_t s, int warmup, int timed, F&& launch) {
  for (int i = 0; i < warmup; ++i) launch();
  std::vector<Event> ev(static_cast<size_t>(timed) + 1);
  check(cudaEventRecord(ev[0].get(), s), "cudaEventRecord");
  for (int i = 0; i < timed; ++i) {
    launch();
    check(cudaEventRecord(ev[i + 1].get(), s), "cudaEventRecord");
  }
  check(cudaEventSynchronize(ev[timed].get()), "cudaEventSynchronize");
  std::vector<double> us;
  for (int i = 0; i < timed; ++i) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, ev[i].get(), ev[i + 1].get()), "cudaEventElapsedTime");
    us.push_back(ms * 1e3);
  }
  return us;
}

}  // namespace dsplan::cuda
