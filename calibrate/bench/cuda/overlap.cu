// Compute beside a collective (records.h, OverlapRecord; docs/model.md §4.6). On every
// local GPU of the group at once: a batch of kBatch fp16 GEMMs (n x n x n, cuBLAS, fp32
// accumulation; fp16 so that every tensor-core GPU runs it) on a compute stream of its own.
//   1. The batch alone, `timed` times (median of the slowest GPU per iteration).
//   2. One collective alone (median of `timed`), to size the queue: k collectives of
//      `bytes`, enough to outlast the batch by half again.
//   3. The k collectives on the group's streams and, launched right after them, the
//      batch on the compute streams; each iteration waits for both before the next.
// loss = 1 - alone / beside. The collectives run on the group's own NCCL streams exactly
// as in collectives.cu (float data, out-of-place, one NCCL group per launch).
#include <cmath>

#include <cuda_fp16.h>

#include "calibrate/bench/cuda/cuda_bench.h"

namespace dsplan::cuda {
namespace {

constexpr int kBatch = 8;
constexpr long long kMaxN = 8192;

__global__ void fill_half(__half* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = __float2half(static_cast<float>(static_cast<int>(i % 13) - 6) / 8.0f);
}

// One GPU's GEMM operands, cuBLAS handle, compute stream and collective buffers.
struct Member {
  int device = 0;
  std::unique_ptr<DeviceBuffer> a, b, c, send, recv;
  std::unique_ptr<Stream> compute;
  cublasHandle_t blas = nullptr;
  ~Member() {
    cudaSetDevice(device);  // the members below are released on their own GPU
    if (blas) cublasDestroy(blas);
  }
};

long long gemm_side(double free_bytes) {
  // Three n x n fp16 matrices in at most a quarter of the free memory.
  const double n = std::sqrt(free_bytes / 4 / 3 / 2);
  return std::max<long long>(1024, std::min<long long>(kMaxN, static_cast<long long>(n) / 256 * 256));
}

void gemm_batch(Member& m, long long n) {
  const float alpha = 1, beta = 0;
  for (int i = 0; i < kBatch; ++i)
    check(cublasGemmEx(m.blas, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &alpha,
                       m.a->get(), CUDA_R_16F, int(n), m.b->get(), CUDA_R_16F, int(n), &beta,
                       m.c->get(), CUDA_R_16F, int(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
}

void collective_once(Collective c, CommGroup& g, std::vector<Member>& ms, size_t count) {
  check(ncclGroupStart(), "ncclGroupStart");
  for (size_t i = 0; i < g.members.size(); ++i) {
    const CommMember& m = g.members[i];
    if (c == Collective::reduce_scatter)
      check(ncclReduceScatter(ms[i].send->get(), ms[i].recv->get(), count, ncclFloat, ncclSum,
                              m.comm, m.stream), "ncclReduceScatter");
    else
      check(ncclAllGather(ms[i].send->get(), ms[i].recv->get(), count, ncclFloat, m.comm,
                          m.stream), "ncclAllGather");
  }
  check(ncclGroupEnd(), "ncclGroupEnd");
}

double elapsed_us(const Event& from, const Event& to) {
  check(cudaEventSynchronize(to.get()), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, from.get(), to.get()), "cudaEventElapsedTime");
  return ms * 1e3;
}

}  // namespace

OverlapRecord run_overlap(CommGroup& g, Collective c, double bytes, const Repeats& r) {
  if (c != Collective::all_gather && c != Collective::reduce_scatter)
    throw BenchFailure("compute beside a collective is measured for all_gather and reduce_scatter only");
  const int n_ranks = g.nranks;
  const size_t count = static_cast<size_t>(bytes / sizeof(float)) / n_ranks;  // per-rank elements
  if (count == 0) throw BenchFailure("message too small for " + std::to_string(n_ranks) + " ranks");
  const size_t whole = count * n_ranks;
  std::vector<Member> ms(g.members.size());
  long long n = kMaxN;
  for (size_t i = 0; i < ms.size(); ++i) {
    check(cudaSetDevice(g.members[i].device), "cudaSetDevice");
    size_t free_b = 0, total_b = 0;
    check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    n = std::min(n, gemm_side(static_cast<double>(free_b)));
  }
  for (size_t i = 0; i < ms.size(); ++i) {
    Member& m = ms[i];
    m.device = g.members[i].device;
    check(cudaSetDevice(m.device), "cudaSetDevice");
    m.compute = std::make_unique<Stream>();
    check(cublasCreate(&m.blas), "cublasCreate");
    check(cublasSetStream(m.blas, m.compute->get()), "cublasSetStream");
    for (auto* buf : {&m.a, &m.b, &m.c}) {
      *buf = std::make_unique<DeviceBuffer>(static_cast<size_t>(n * n) * sizeof(__half));
      fill_half<<<1024, 256, 0, m.compute->get()>>>((*buf)->as<__half>(), static_cast<size_t>(n * n));
      check(cudaGetLastError(), "fill kernel");
    }
    const bool gather = c == Collective::all_gather;
    m.send = std::make_unique<DeviceBuffer>((gather ? count : whole) * sizeof(float));
    m.recv = std::make_unique<DeviceBuffer>((gather ? whole : count) * sizeof(float));
    check(cudaMemsetAsync(m.send->get(), 0, m.send->bytes(), g.members[i].stream), "cudaMemset");
  }
  const int timed = std::max(3, r.timed / 4);
  auto slowest = [&](auto&& per_member) {
    double worst = 0;
    for (size_t i = 0; i < ms.size(); ++i) worst = std::max(worst, per_member(i));
    return g.max_over_processes(worst);
  };
  // 1. The batch alone.
  std::vector<double> alone;
  for (int it = -1; it < timed; ++it) {  // iteration -1 warms cuBLAS up
    std::vector<Event> ev(2 * ms.size());
    for (size_t i = 0; i < ms.size(); ++i) {
      check(cudaSetDevice(g.members[i].device), "cudaSetDevice");
      check(cudaEventRecord(ev[2 * i].get(), ms[i].compute->get()), "cudaEventRecord");
      gemm_batch(ms[i], n);
      check(cudaEventRecord(ev[2 * i + 1].get(), ms[i].compute->get()), "cudaEventRecord");
    }
    const double t = slowest([&](size_t i) { return elapsed_us(ev[2 * i], ev[2 * i + 1]); });
    if (it >= 0) alone.push_back(t);
  }
  // 2. One collective alone, to size the queue.
  std::vector<double> one;
  for (int it = -1; it < timed; ++it) {
    std::vector<Event> ev(2 * ms.size());
    for (size_t i = 0; i < ms.size(); ++i) {
      check(cudaSetDevice(g.members[i].device), "cudaSetDevice");
      check(cudaEventRecord(ev[2 * i].get(), g.members[i].stream), "cudaEventRecord");
    }
    collective_once(c, g, ms, count);
    for (size_t i = 0; i < ms.size(); ++i) {
      check(cudaSetDevice(g.members[i].device), "cudaSetDevice");
      check(cudaEventRecord(ev[2 * i + 1].get(), g.members[i].stream), "cudaEventRecord");
    }
    const double t = slowest([&](size_t i) { return elapsed_us(ev[2 * i], ev[2 * i + 1]); });
    if (it >= 0) one.push_back(t);
  }
  const double t_alone = median(alone), t_one = std::max(1.0, median(one));
  const int k = std::max(1, static_cast<int>(std::ceil(1.5 * t_alone / t_one)));
  // 3. Beside: k collectives, then the batch; both finish before the next iteration.
  std::vector<double> beside, comm;
  for (int it = -1; it < timed; ++it) {
    std::vector<Event> ev(4 * ms.size());
    for (size_t i = 0; i < ms.size(); ++i) {
      check(cudaSetDevice(g.members[i].device), "cudaSetDevice");
      check(cudaEventRecord(ev[4 * i].get(), g.members[i].stream), "cudaEventRecord");
    }
    for (int j = 0; j < k; ++j) collective_once(c, g, ms, count);
    for (size_t i = 0; i < ms.size(); ++i) {
      check(cudaSetDevice(g.members[i].device), "cudaSetDevice");
      check(cudaEventRecord(ev[4 * i + 1].get(), g.members[i].stream), "cudaEventRecord");
      check(cudaEventRecord(ev[4 * i + 2].get(), ms[i].compute->get()), "cudaEventRecord");
      gemm_batch(ms[i], n);
      check(cudaEventRecord(ev[4 * i + 3].get(), ms[i].compute->get()), "cudaEventRecord");
    }
    const double tb = slowest([&](size_t i) { return elapsed_us(ev[4 * i + 2], ev[4 * i + 3]); });
    const double tc = slowest([&](size_t i) { return elapsed_us(ev[4 * i], ev[4 * i + 1]); });
    if (it >= 0) {
      beside.push_back(tb);
      comm.push_back(tc);
    }
  }
  OverlapRecord rec;
  rec.collective = c;
  rec.scope = g.scope;
  rec.ranks = n_ranks;
  rec.bytes = static_cast<double>(whole * sizeof(float));
  rec.gemm_alone_us = t_alone;
  rec.gemm_beside_us = median(beside);
  rec.comm_us = median(comm);
  rec.loss = rec.gemm_beside_us > 0 ? 1.0 - rec.gemm_alone_us / rec.gemm_beside_us : 0.0;
  return rec;
}

}  // namespace dsplan::cuda
