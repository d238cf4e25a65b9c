// NCCL-structured collective model against nccl-tests measurements in published.json and
// hand-derived bandwidths.
#include "estimator/time/collectives.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "estimator/time/efficiency_defaults.h"
#include "fixtures.h"

namespace dsplan {
namespace {

double measured_busbw(const std::string& id) {
  std::ifstream in(DSPLAN_VALIDATION_FILE);
  const nlohmann::json all = nlohmann::json::parse(in);
  for (const auto& r : all)
    if (r.at("id") == id) return r.at("measured").at("busbw_GBps").get<double>();
  ADD_FAILURE() << id << " not in published.json";
  return 0;
}

double model_busbw(const SystemSpec& s, double bytes, CommAlgo* algo = nullptr) {
  const CollectiveModel m(s, default_efficiency(s.gpu));
  const CollectiveCost c = m.estimate(Collective::all_reduce, Bytes(bytes), {8, 8});
  if (algo) *algo = c.algo;
  return in_GBps(c.busbw);
}

// A100 NVSwitch: 12 links x 20 GB/s NCCL-usable = 240 GB/s bus bandwidth; at 16 GiB the
// 56 us ring latency is negligible, so busbw = 240 (measured 234.89: +2.2%).
TEST(Collectives, A100RingAllReduce16GiB) {
  CommAlgo a;
  const double bw = model_busbw(test::dgx_a100(), 16.0 * kGiB, &a);
  EXPECT_EQ(a, CommAlgo::ring);
  EXPECT_NEAR(bw, 240.0, 0.5);
  EXPECT_NEAR(bw / measured_busbw("nccl_8xA100_16G"), 1.0, 0.05);
}

// H200 NVLink4: 18 x 20.6 = 370.8 GB/s (measured 367.61: +0.9%).
TEST(Collectives, H200RingAllReduce16GiB) {
  const double bw = model_busbw(test::dgx_h200(false), 16.0 * kGiB);
  EXPECT_NEAR(bw, 370.8, 0.5);
  EXPECT_NEAR(bw / measured_busbw("nccl_8xH200_16G_ring"), 1.0, 0.03);
}

// NVLS: each GPU moves S(1 + 1/n) at 0.85 x 370.8 GB/s, so nccl-tests reports
// busbw = 2(n-1)/n x 0.85 x 370.8 / (1 + 1/n) = 1.75 x 315.18 / 1.125 = 490.3 GB/s
// (measured 482.26 at 16 GiB, 480 at 4 GiB on H100).
TEST(Collectives, H200NvlsAllReduce) {
  CommAlgo a;
  const double bw = model_busbw(test::dgx_h200(true), 16.0 * kGiB, &a);
  EXPECT_EQ(a, CommAlgo::nvls);
  EXPECT_NEAR(bw, 490.3, 0.5);
  EXPECT_NEAR(bw / measured_busbw("nccl_8xH200_16G_nvls"), 1.0, 0.03);
  EXPECT_NEAR(model_busbw(test::dgx_h200(true), 4.0 * kGiB) / measured_busbw("nccl_8xH100_4G"), 1.0, 0.03);
}

// A DGX B200 with NCCL's Blackwell entries: NVLink 5 at 900 GB/s/dir, of which NCCL uses
// 40.0 GB/s of each 50 GB/s link: ring busbw 18 x 40 = 720 GB/s. NVLS at efficiency 0.74:
// busbw = 2(n-1)/n x 0.74 x 720 / (1 + 1/n) = 1.75 x 532.8 / 1.125 = 828.8 GB/s, the faster.
// With Hopper's 0.85 it would be 952.0: the Blackwell row is what moves it. (At 16 GiB the
// latencies, ~60 us ring and 25 us NVLS, still take 0.13% and 0.07%: 719.0 and 828.2.)
TEST(Collectives, B200UsesNcclsBlackwellEntries) {
  SystemSpec s = test::dgx_h200(false);
  s.gpu.arch = GpuArch::blackwell;
  s.gpu.nvlink_bw_per_link = GBps(50);
  s.intra_bw_per_gpu = GBps(900);
  EXPECT_NEAR(model_busbw(s, 16.0 * kGiB), 719.0, 0.5);
  s.nvls = true;
  CommAlgo a;
  EXPECT_NEAR(model_busbw(s, 16.0 * kGiB, &a), 828.2, 0.5);
  EXPECT_EQ(a, CommAlgo::nvls);
}

// Small messages are latency-bound and use LL: 2 A100s, 32 B -> ring LL latency
// 6.6 + 2 x 0.6 = 7.8 us (NVIDIA/nccl #583 measured 10.1 us).
TEST(Collectives, SmallMessageIsLatencyBound) {
  const SystemSpec s = test::dgx_a100();
  const CollectiveModel m(s, default_efficiency(s.gpu));
  const CollectiveCost c = m.estimate(Collective::all_reduce, Bytes(32), {2, 2});
  EXPECT_EQ(c.proto, CommProto::ll);
  EXPECT_NEAR(in_us(c.time), 7.8, 0.01);
  // The bus bandwidth rises with size (1 MB far below the 16 GiB plateau).
  EXPECT_LT(model_busbw(s, 1e6), 0.6 * model_busbw(s, 1e9));
}

// Two DGX A100 nodes, 16 ranks, 8 per node: ring rule min(240, 0.9 x 8 x 25) = 180 GB/s.
// One rank per node (a DP group beside TP=8): the node's NICs are shared by the 8
// concurrent groups: 0.9 x 8 x 25 / 8 = 22.5 GB/s.
TEST(Collectives, MultiNodeRingRule) {
  const SystemSpec s = test::dgx_a100();
  const CollectiveModel m(s, default_efficiency(s.gpu));
  EXPECT_NEAR(in_GBps(m.inter_busbw(8)), 180.0, 1e-9);
  EXPECT_NEAR(in_GBps(m.inter_busbw(1)), 22.5, 1e-9);
  const CollectiveCost big = m.estimate(Collective::all_reduce, GiB(8), {16, 8});
  EXPECT_NEAR(in_GBps(big.busbw), 180.0, 2.0);
  const CollectiveCost dp = m.estimate(Collective::reduce_scatter, GiB(8), {4, 1});
  EXPECT_NEAR(in_GBps(dp.busbw), 22.5, 0.3);
}

// All-gather/reduce-scatter move (n-1)/n of S; all-reduce 2(n-1)/n: an all-reduce of S
// costs about an RS plus an AG of S at large sizes.
TEST(Collectives, AllReduceIsReduceScatterPlusAllGather) {
  const SystemSpec s = test::dgx_a100();
  const CollectiveModel m(s, default_efficiency(s.gpu));
  const double ar = m.time(Collective::all_reduce, GiB(1), {8, 8}).v;
  const double rs = m.time(Collective::reduce_scatter, GiB(1), {8, 8}).v;
  const double ag = m.time(Collective::all_gather, GiB(1), {8, 8}).v;
  EXPECT_NEAR(ar / (rs + ag), 1.0, 0.02);
}

// On a PCIe box NCCL has no LL128 and ~12 of 15.75 GB/s per Gen3 link.
TEST(Collectives, PcieNodeIsSlowerThanNvlink) {
  const SystemSpec nv = test::dgx1();
  SystemSpec pci = nv;
  pci.topology = IntraTopology::pcie;
  pci.intra_bw_per_gpu = GBps(15.75);
  EXPECT_NEAR(model_busbw(pci, 1e9), 12.0, 0.2);
  EXPECT_GT(model_busbw(nv, 1e9), 5 * model_busbw(pci, 1e9));
}

// A measured fit replaces the model for its (collective, scope).
TEST(Collectives, MeasuredFitOverridesModel) {
  const SystemSpec s = test::dgx_a100();
  Efficiency e = default_efficiency(s.gpu);
  e.collectives[0][0] = CollectiveFit{us(10), GBps(100)};
  const CollectiveModel m(s, e);
  // 10 us + 1e9 B x 2 x 7/8 / 100 GB/s = 10 us + 17.5 ms.
  EXPECT_NEAR(in_ms(m.time(Collective::all_reduce, Bytes(1e9), {8, 8})), 17.51, 1e-9);
  // Inter-node has no fit: the model still prices it.
  EXPECT_EQ(m.estimate(Collective::all_reduce, Bytes(1e9), {16, 8}).algo, CommAlgo::ring);
}

TEST(Collectives, SingleRankCostsNothing) {
  const SystemSpec s = test::dgx_a100();
  const CollectiveModel m(s, default_efficiency(s.gpu));
  EXPECT_EQ(m.time(Collective::all_reduce, GiB(1), {1, 1}).v, 0.0);
}

}  // namespace
}  // namespace dsplan

namespace dsplan {
namespace {

// A pipeline send between two DGX A100 nodes: the sending GPU's share of the node's NICs is
// 0.9 x 8 x 25 GB/s / 8 = 22.5 GB/s, so 22.5 MB take 1000 us, plus the Simple protocol's
// latency 8.4 (base) + 14 (network) = 22.4 us: 1022.4 us. LL would be 2000 us at half the
// bandwidth. (Until session 4 the Simple path divided bytes by B/s / 1e3 and reported
// 1022.4 us as 23.4 us: pipeline sends cost almost nothing.)
TEST(Collectives, InterNodeSendIsBandwidthBound) {
  const SystemSpec s = test::dgx_a100();
  const CollectiveModel m(s, default_efficiency(s.gpu));
  const CollectiveCost c = m.estimate(Collective::send_recv, Bytes(22.5e6), {2, 1});
  EXPECT_NEAR(c.time.v * 1e6, 1022.4, 0.01);
  EXPECT_EQ(c.algo, CommAlgo::p2p);
  EXPECT_EQ(c.proto, CommProto::simple);
  // Inside a node the pair shares NVSwitch: 300 GB/s x 0.8 = 240 GB/s -> 93.75 us + 8.4 +
  // 3.4 (NVLink Simple latency) = 105.55 us.
  EXPECT_NEAR(m.estimate(Collective::send_recv, Bytes(22.5e6), {2, 2}).time.v * 1e6, 105.55, 0.01);
}

}  // namespace
}  // namespace dsplan
