// GEMM benchmark: C[m x n] = A[m x k] B[k x n] (column-major, no transposes) through
// cuBLASLt with its top heuristic algorithm and a 32 MiB workspace (falling back to
// cublasGemmEx when the heuristic offers nothing). Inputs are uniform in [-1, 1] from a
// hash, so runs are reproducible. A checked case also runs a naive fp32-accumulating
// reference kernel on the same inputs and reports max|C - C_ref| / max|C_ref|.
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "calibrate/bench/cuda/cuda_bench.h"

namespace dsplan::cuda {
namespace {

constexpr size_t kWorkspace = 32u << 20;

struct TypeInfo {
  cudaDataType_t data;
  cublasComputeType_t compute;
  size_t size;
};

TypeInfo type_info(GemmDtype d) {
  switch (d) {
    case GemmDtype::bf16: return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2};
    case GemmDtype::fp16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F, 2};
    case GemmDtype::tf32: return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4};
    default: return {CUDA_R_32F, CUBLAS_COMPUTE_32F, 4};
  }
}

__device__ float to_float(float x) { return x; }
__device__ float to_float(__half x) { return __half2float(x); }
__device__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T> __device__ T from_float(float x);
template <> __device__ float from_float<float>(float x) { return x; }
template <> __device__ __half from_float<__half>(float x) { return __float2half(x); }
template <> __device__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16(x); }

// Uniform in [-1, 1) from a 64-bit mix of (seed, index).
__device__ float hash_uniform(unsigned long long i, unsigned long long seed) {
  unsigned long long z = i * 0x9E3779B97F4A7C15ull + seed;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) / static_cast<float>(1ull << 23) - 1.0f;
}

template <class T>
__global__ void fill_kernel(T* p, size_t n, unsigned long long seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = from_float<T>(hash_uniform(i, seed));
}

// One thread per output element; also folds |C - C_ref| and |C_ref| maxima into `stats`
// (non-negative floats compare like their bit patterns, so atomicMax on unsigned works).
template <class T>
__global__ void reference_kernel(const T* a, const T* b, const T* c, long long m, long long n,
                                 long long k, unsigned* stats) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= m * n) return;
  long long row = i % m, col = i / m;
  float acc = 0;
  for (long long l = 0; l < k; ++l) acc += to_float(a[row + l * m]) * to_float(b[l + col * k]);
  float diff = fabsf(to_float(c[i]) - acc);
  atomicMax(&stats[0], __float_as_uint(diff));
  atomicMax(&stats[1], __float_as_uint(fabsf(acc)));
}

template <class T>
void fill(void* p, size_t n, unsigned long long seed, cudaStream_t s) {
  fill_kernel<T><<<1024, 256, 0, s>>>(static_cast<T*>(p), n, seed);
  check(cudaGetLastError(), "fill kernel");
}

void fill_any(GemmDtype d, void* p, size_t n, unsigned long long seed, cudaStream_t s) {
  if (d == GemmDtype::bf16) fill<__nv_bfloat16>(p, n, seed, s);
  else if (d == GemmDtype::fp16) fill<__half>(p, n, seed, s);
  else fill<float>(p, n, seed, s);
}

template <class T>
double reference_error(const void* a, const void* b, const void* c, const GemmCase& g,
                       cudaStream_t s) {
  DeviceBuffer stats(2 * sizeof(unsigned));
  check(cudaMemsetAsync(stats.get(), 0, stats.bytes(), s), "cudaMemset");
  const long long total = g.m * g.n;
  reference_kernel<T><<<static_cast<unsigned>((total + 255) / 256), 256, 0, s>>>(
      static_cast<const T*>(a), static_cast<const T*>(b), static_cast<const T*>(c), g.m, g.n,
      g.k, stats.as<unsigned>());
  check(cudaGetLastError(), "reference kernel");
  unsigned host[2] = {0, 0};
  check(cudaMemcpyAsync(host, stats.get(), sizeof(host), cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  float diff, ref;
  std::memcpy(&diff, &host[0], 4);
  std::memcpy(&ref, &host[1], 4);
  return ref > 0 ? diff / ref : diff;
}

// cuBLASLt objects of one GEMM problem, destroyed on scope exit.
struct LtProblem {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtProblem() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

}  // namespace

GemmRunner::GemmRunner(int device) : device_(device) {
  check(cudaSetDevice(device_), "cudaSetDevice");
  check(cublasLtCreate(&lt_), "cublasLtCreate");
  check(cublasCreate(&blas_), "cublasCreate");
  stream_ = std::make_unique<Stream>();
  workspace_ = std::make_unique<DeviceBuffer>(kWorkspace);
  check(cublasSetStream(blas_, stream_->get()), "cublasSetStream");
  check(cublasSetWorkspace(blas_, workspace_->get(), kWorkspace), "cublasSetWorkspace");
}

GemmRunner::~GemmRunner() {
  if (blas_) cublasDestroy(blas_);
  if (lt_) cublasLtDestroy(lt_);
}

GemmRecord GemmRunner::run(const GemmCase& g) {
  check(cudaSetDevice(device_), "cudaSetDevice");
  const TypeInfo t = type_info(g.dtype);
  const cudaStream_t s = stream_->get();
  DeviceBuffer a(g.m * g.k * t.size), b(g.k * g.n * t.size), c(g.m * g.n * t.size);
  fill_any(g.dtype, a.get(), g.m * g.k, 1, s);
  fill_any(g.dtype, b.get(), g.k * g.n, 2, s);
  const float alpha = 1, beta = 0;

  LtProblem p;
  check(cublasLtMatmulDescCreate(&p.desc, t.compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  check(cublasLtMatrixLayoutCreate(&p.a, t.data, g.m, g.k, g.m), "cublasLtMatrixLayoutCreate");
  check(cublasLtMatrixLayoutCreate(&p.b, t.data, g.k, g.n, g.k), "cublasLtMatrixLayoutCreate");
  check(cublasLtMatrixLayoutCreate(&p.c, t.data, g.m, g.n, g.m), "cublasLtMatrixLayoutCreate");
  check(cublasLtMatmulPreferenceCreate(&p.pref), "cublasLtMatmulPreferenceCreate");
  size_t ws = kWorkspace;
  check(cublasLtMatmulPreferenceSetAttribute(p.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &ws, sizeof(ws)), "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt_, p.desc, p.a, p.b, p.c, p.c, p.pref, 1,
                                                     &heur, &found);
  const bool use_lt = hs == CUBLAS_STATUS_SUCCESS && found > 0;
  auto launch = [&] {
    if (use_lt) {
      check(cublasLtMatmul(lt_, p.desc, &alpha, a.get(), p.a, b.get(), p.b, &beta, c.get(), p.c,
                           c.get(), p.c, &heur.algo, workspace_->get(), kWorkspace, s),
            "cublasLtMatmul");
    } else {
      check(cublasGemmEx(blas_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(g.m),
                         static_cast<int>(g.n), static_cast<int>(g.k), &alpha, a.get(), t.data,
                         static_cast<int>(g.m), b.get(), t.data, static_cast<int>(g.k), &beta,
                         c.get(), t.data, static_cast<int>(g.m), t.compute, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
    }
  };
  std::vector<double> times = time_launches(s, g.repeats.warmup, g.repeats.timed, launch);
  GemmRecord r{g.m, g.n, g.k, g.dtype, g.label, median(times), 0, std::nullopt};
  r.tflops = 2.0 * g.m * g.n * g.k / (r.median_us * 1e-6) / 1e12;
  if (g.check) {
    if (g.dtype == GemmDtype::bf16) r.max_rel_err = reference_error<__nv_bfloat16>(a.get(), b.get(), c.get(), g, s);
    else if (g.dtype == GemmDtype::fp16) r.max_rel_err = reference_error<__half>(a.get(), b.get(), c.get(), g, s);
    else r.max_rel_err = reference_error<float>(a.get(), b.get(), c.get(), g, s);
  }
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  return r;
}

}  // namespace dsplan::cuda
