// Memory bandwidth benchmarks. HBM: a float4 grid-stride copy (2 streams: read + write)
// and a STREAM-style triad a = b + s*c (3 streams); `bytes` is the total moved per run, so
// GB/s = bytes / time. PCIe: cudaMemcpyAsync between pinned host memory and the device,
// one direction at a time.
#include "calibrate/bench/cuda/cuda_bench.h"

namespace dsplan::cuda {
namespace {

__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b,
                             const float4* __restrict__ c, float s, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

unsigned grid_blocks(int device) {
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return static_cast<unsigned>(sms * 8);
}

// Returns the median time (us) and the bytes actually moved (rounded to whole float4s).
std::pair<double, double> hbm(int device, BandwidthKind kind, double bytes, const Repeats& r,
                              cudaStream_t s) {
  const int streams = kind == BandwidthKind::hbm_copy ? 2 : 3;
  const size_t n = static_cast<size_t>(bytes / streams / sizeof(float4));
  DeviceBuffer a(n * sizeof(float4)), b(n * sizeof(float4)), c(n * sizeof(float4));
  check(cudaMemsetAsync(b.get(), 0, b.bytes(), s), "cudaMemset");
  check(cudaMemsetAsync(c.get(), 0, c.bytes(), s), "cudaMemset");
  const unsigned blocks = grid_blocks(device);
  auto launch = [&] {
    if (kind == BandwidthKind::hbm_copy)
      copy_kernel<<<blocks, 256, 0, s>>>(b.as<float4>(), a.as<float4>(), n);
    else
      triad_kernel<<<blocks, 256, 0, s>>>(a.as<float4>(), b.as<float4>(), c.as<float4>(), 3.0f, n);
    check(cudaGetLastError(), "bandwidth kernel");
  };
  double t = median(time_launches(s, r.warmup, r.timed, launch));
  return {t, static_cast<double>(n * sizeof(float4) * streams)};
}

std::pair<double, double> pcie(BandwidthKind kind, double bytes, const Repeats& r, cudaStream_t s) {
  const size_t n = static_cast<size_t>(bytes);
  PinnedBuffer host(n);
  DeviceBuffer dev(n);
  const bool h2d = kind == BandwidthKind::pcie_h2d;
  auto launch = [&] {
    check(cudaMemcpyAsync(h2d ? dev.get() : host.get(), h2d ? host.get() : dev.get(), n,
                          h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s),
          "cudaMemcpyAsync");
  };
  return {median(time_launches(s, r.warmup, r.timed, launch)), static_cast<double>(n)};
}

}  // namespace

BandwidthRecord run_bandwidth(int device, BandwidthKind kind, double bytes, const Repeats& r) {
  check(cudaSetDevice(device), "cudaSetDevice");
  Stream stream;
  const bool is_hbm = kind == BandwidthKind::hbm_copy || kind == BandwidthKind::hbm_triad;
  auto [t_us, moved] = is_hbm ? hbm(device, kind, bytes, r, stream.get())
                              : pcie(kind, bytes, r, stream.get());
  check(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize");
  return BandwidthRecord{kind, moved, t_us, moved / (t_us * 1e-6) / 1e9};
}

}  // namespace dsplan::cuda
