// NCCL collective benchmark in nccl-tests' conventions (hardware-and-comm.md §2): float
// data, out-of-place, message size S = the whole buffer (all_reduce, broadcast, send/recv)
// or the whole gathered/scattered buffer (all_gather, reduce_scatter); algbw = S/t and
// busbw = algbw * bus_factor. send/recv is a ring shift: each rank sends to rank+1 and
// receives from rank-1 at once. Rank r's input element i is (r+1) + i%7, so every output
// has a closed form that a device kernel checks after timing.
#include "calibrate/bench/cuda/cuda_bench.h"

namespace dsplan::cuda {
namespace {

struct Sizes {
  size_t send_elems, recv_elems, count;  // count: the NCCL call's count argument
};

Sizes sizes_for(Collective c, size_t elems, int n) {
  const size_t per_rank = elems / n;
  switch (c) {
    case Collective::reduce_scatter: return {per_rank * n, per_rank, per_rank};
    case Collective::all_gather: return {per_rank, per_rank * n, per_rank};
    default: return {elems, elems, elems};
  }
}

__global__ void fill_input(float* p, size_t n, int rank) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = static_cast<float>(rank + 1 + static_cast<int>(i % 7));
}

// The value rank `rank` of `n` must hold at output index i.
__device__ float expected(int coll, int rank, int n, size_t count, size_t i) {
  const float tri = 0.5f * n * (n + 1);  // sum over ranks of (r+1)
  switch (coll) {
    case 0: return tri + n * static_cast<float>(i % 7);                         // all_reduce
    case 1: return tri + n * static_cast<float>((rank * count + i) % 7);        // reduce_scatter
    case 2: return static_cast<float>(i / count + 1 + (i % count) % 7);         // all_gather
    case 3: return static_cast<float>(1 + i % 7);                               // broadcast from 0
    default: return static_cast<float>((rank + n - 1) % n + 1 + static_cast<int>(i % 7));  // send_recv
  }
}

__global__ void check_output(const float* p, size_t n_elems, int coll, int rank, int n,
                             size_t count, unsigned long long* wrong) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n_elems; i += size_t(gridDim.x) * blockDim.x)
    if (p[i] != expected(coll, rank, n, count, i)) ++local;
  if (local) atomicAdd(wrong, local);
}

void launch(Collective c, const CommMember& m, int n, const Sizes& s, const float* in, float* out) {
  switch (c) {
    case Collective::all_reduce:
      check(ncclAllReduce(in, out, s.count, ncclFloat, ncclSum, m.comm, m.stream), "ncclAllReduce");
      break;
    case Collective::reduce_scatter:
      check(ncclReduceScatter(in, out, s.count, ncclFloat, ncclSum, m.comm, m.stream), "ncclReduceScatter");
      break;
    case Collective::all_gather:
      check(ncclAllGather(in, out, s.count, ncclFloat, m.comm, m.stream), "ncclAllGather");
      break;
    case Collective::broadcast:
      check(ncclBroadcast(in, out, s.count, ncclFloat, 0, m.comm, m.stream), "ncclBroadcast");
      break;
    default:
      check(ncclSend(in, s.count, ncclFloat, (m.rank + 1) % n, m.comm, m.stream), "ncclSend");
      check(ncclRecv(out, s.count, ncclFloat, (m.rank + n - 1) % n, m.comm, m.stream), "ncclRecv");
  }
}

struct MemberBuffers {
  std::unique_ptr<DeviceBuffer> in, out;
  std::vector<Event> events;
};

// One collective across all local members, as one NCCL group.
void launch_all(Collective c, CommGroup& g, const Sizes& s, std::vector<MemberBuffers>& bufs) {
  check(ncclGroupStart(), "ncclGroupStart");
  for (size_t i = 0; i < g.members.size(); ++i)
    launch(c, g.members[i], g.nranks, s, bufs[i].in->as<float>(), bufs[i].out->as<float>());
  check(ncclGroupEnd(), "ncclGroupEnd");
}

void record_all(CommGroup& g, std::vector<MemberBuffers>& bufs, size_t slot) {
  for (size_t i = 0; i < g.members.size(); ++i) {
    check(cudaSetDevice(g.members[i].device), "cudaSetDevice");
    check(cudaEventRecord(bufs[i].events[slot].get(), g.members[i].stream), "cudaEventRecord");
  }
}

long long count_wrong(Collective c, CommGroup& g, const Sizes& s, std::vector<MemberBuffers>& bufs) {
  long long wrong = 0;
  for (size_t i = 0; i < g.members.size(); ++i) {
    const CommMember& m = g.members[i];
    check(cudaSetDevice(m.device), "cudaSetDevice");
    DeviceBuffer counter(sizeof(unsigned long long));
    check(cudaMemsetAsync(counter.get(), 0, counter.bytes(), m.stream), "cudaMemset");
    check_output<<<256, 256, 0, m.stream>>>(bufs[i].out->as<float>(), s.recv_elems,
                                            static_cast<int>(c), m.rank, g.nranks, s.count,
                                            counter.as<unsigned long long>());
    check(cudaGetLastError(), "check kernel");
    unsigned long long host = 0;
    check(cudaMemcpyAsync(&host, counter.get(), sizeof(host), cudaMemcpyDeviceToHost, m.stream), "cudaMemcpy");
    check(cudaStreamSynchronize(m.stream), "cudaStreamSynchronize");
    wrong += static_cast<long long>(host);
  }
  return g.sum_over_processes(wrong);
}

}  // namespace

CollectiveRecord run_collective(CommGroup& g, Collective c, double bytes, const Repeats& r) {
  const int n = g.nranks;
  const size_t elems = static_cast<size_t>(bytes / sizeof(float)) / n * n;
  if (elems == 0) throw BenchFailure("message too small for " + std::to_string(n) + " ranks");
  const Sizes s = sizes_for(c, elems, n);
  std::vector<MemberBuffers> bufs(g.members.size());
  for (size_t i = 0; i < g.members.size(); ++i) {
    const CommMember& m = g.members[i];
    check(cudaSetDevice(m.device), "cudaSetDevice");
    bufs[i].in = std::make_unique<DeviceBuffer>(s.send_elems * sizeof(float));
    bufs[i].out = std::make_unique<DeviceBuffer>(s.recv_elems * sizeof(float));
    bufs[i].events = std::vector<Event>(static_cast<size_t>(r.timed) + 1);
    fill_input<<<256, 256, 0, m.stream>>>(bufs[i].in->as<float>(), s.send_elems, m.rank);
    check(cudaGetLastError(), "fill kernel");
  }
  for (int w = 0; w < r.warmup; ++w) launch_all(c, g, s, bufs);
  record_all(g, bufs, 0);
  for (int it = 0; it < r.timed; ++it) {
    launch_all(c, g, s, bufs);
    record_all(g, bufs, static_cast<size_t>(it) + 1);
  }
  // Per iteration, the slowest local member; then the median; then the slowest process.
  std::vector<double> per_iter(static_cast<size_t>(r.timed), 0.0);
  for (size_t i = 0; i < g.members.size(); ++i) {
    check(cudaSetDevice(g.members[i].device), "cudaSetDevice");
    check(cudaEventSynchronize(bufs[i].events.back().get()), "cudaEventSynchronize");
    for (int it = 0; it < r.timed; ++it) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, bufs[i].events[it].get(), bufs[i].events[it + 1].get()),
            "cudaEventElapsedTime");
      per_iter[it] = std::max(per_iter[it], ms * 1e3);
    }
  }
  const double t_us = g.max_over_processes(median(per_iter));
  const double S = static_cast<double>(elems * sizeof(float));
  CollectiveRecord rec{c, g.scope, n, S, t_us, S / (t_us * 1e-6) / 1e9, 0, std::nullopt};
  rec.busbw_GBps = rec.algbw_GBps * bus_factor(c, n);
  rec.correct = count_wrong(c, g, s, bufs) == 0;
  return rec;
}

}  // namespace dsplan::cuda
