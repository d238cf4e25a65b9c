// NCCL-structured collective costs. Constants are NCCL's tuning tables (v2.30 tuning.cc,
// reference §2); the derivation and the checks against nccl-tests measurements are in
// docs/model.md §4 Step time, "Collectives". Times in microseconds internally, as NCCL keeps them.
#include "estimator/time/collectives.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dsplan {

namespace {

constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
// Base latencies (us) per protocol {LL, LL128, Simple}.
constexpr double kBaseRing[3] = {6.6, 14.0, 8.4};
constexpr double kBaseTree[3] = {6.8, 14.0, 8.4};
// Hardware latencies (us): NVLink / PCI / NET rows.
constexpr double kRingIntraNvl[3] = {0.6, 1.9, 3.4};
constexpr double kRingIntraPci[3] = {1.0, 2.5, 5.7};
constexpr double kRingNet[3] = {2.7, 4.0, 14.0};
constexpr double kTreeIntraNvl[3] = {0.6, 1.25, 4.0};
constexpr double kTreeIntraPci[3] = {1.0, 1.9, 4.0};
constexpr double kTreeNet[3] = {5.0, 8.5, 14.0};
constexpr double kNvlsIntraLat = 25.0, kNvlsNetLat = 18.0;
constexpr double kNetOverhead = 1.0;  // us per intra step once the ring leaves the node
// LL bandwidth ceiling (GB/s) per arch (Volta, Ampere, Hopper, Blackwell) for 1 / 2 / more
// nodes; Blackwell's row is twice Hopper's in NCCL's table.
constexpr double kLLMaxBw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
constexpr double kNvlsEff[4] = {0.0, 0.0, 0.85, 0.74};
// NCCL-usable share of an NVLink's line rate (topo.h: SM70 20.0, SM80 20.0, SM90 20.6 GB/s
// of NVLink 2-4's 25; SM100 40.0 of NVLink 5's 50) and of PCIe (PCI_BW 12 of Gen3's 15.75).
constexpr double kLinkUsable[4] = {20.0 / 25.0, 20.0 / 25.0, 20.6 / 25.0, 40.0 / 50.0};
constexpr double kPcieUsable = 12.0 / 15.75;
// NICs deliver 85-96% of line rate in multi-node nccl-tests (reference §2).
constexpr double kNicEfficiency = 0.9;
// Tree all-reduce bandwidth correction by log2(bytes/64), Simple protocol: dips to ~0.5
// between ~16 KB and ~2 MB (reference §2); LL/LL128 rows are near 1.
constexpr double kTreeCorrSimple[23] = {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
                                        .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9};

constexpr double kInf = std::numeric_limits<double>::infinity();

int arch_index(GpuArch a) {
  switch (a) {
    case GpuArch::volta: return 0;
    case GpuArch::ampere: return 1;
    case GpuArch::hopper: return 2;
    case GpuArch::blackwell:
      return 3;
  }
  return 1;
}

// Ring steps: all-reduce 2(n-1) (reduce-scatter then all-gather), others n-1.
double ring_steps(Collective c, int n) { return c == Collective::all_reduce ? 2.0 * (n - 1) : n - 1.0; }
// Bytes each rank moves over its busiest link, relative to S.
double bw_volume(Collective c, int n) {
  switch (c) {
    case Collective::all_reduce: return 2.0 * (n - 1) / n;
    case Collective::reduce_scatter:
    case Collective::all_gather: return (n - 1.0) / n;
    default: return 1.0;
  }
}

double tree_correction(double bytes) {
  const double idx = std::log2(std::max(64.0, bytes) / 64.0);
  const int i = std::clamp(static_cast<int>(idx), 0, 22);
  return kTreeCorrSimple[i];
}

CollectiveCost make(double t_us, CommAlgo a, int proto, Collective c, double bytes, int n) {
  CollectiveCost r;
  r.time = us(t_us);
  r.algo = a;
  r.proto = static_cast<CommProto>(proto);
  r.busbw = BytesPerSecond(t_us > 0 ? bytes / (t_us * 1e-6) * bus_factor(c, n) : 0.0);
  return r;
}

}  // namespace

double bus_factor(Collective c, int ranks) {
  if (ranks <= 1) return 1.0;
  return bw_volume(c, ranks);
}

CollectiveModel::CollectiveModel(const SystemSpec& node, const Efficiency& eff)
    : node_(node), eff_(eff), arch_(arch_index(node.gpu.arch)) {
  ll128_ = node.topology != IntraTopology::pcie;
  link_usable_ = node.topology == IntraTopology::pcie ? kPcieUsable : kLinkUsable[arch_];
}

BytesPerSecond CollectiveModel::intra_busbw(int rpn) const {
  double b = node_.intra_bw_per_gpu.v * link_usable_;
  if (node_.topology == IntraTopology::nvlink_mesh && node_.gpus_per_node > 1) {
    // Point-to-point links: a group reaches only the links to its own members.
    b *= std::min(1.0, (rpn - 1.0) / (node_.gpus_per_node - 1.0));
  }
  return BytesPerSecond(b);
}

BytesPerSecond CollectiveModel::inter_busbw(int rpn) const {
  // All groups of a node communicate at once (DP groups of every TP/PP rank), so this
  // group gets rpn / gpus_per_node of the node's NIC bandwidth.
  const double share = std::min(1.0, rpn / std::max(1.0, double(node_.gpus_per_node)));
  return BytesPerSecond(kNicEfficiency * node_.nics_per_node * node_.nic_bw.v * share);
}

double CollectiveModel::busbw_for(CommGroup g) const {
  const double intra = g.ranks_per_node > 1 ? intra_busbw(g.ranks_per_node).v : kInf;
  if (g.nodes() <= 1) return intra;
  return std::min(intra, inter_busbw(g.ranks_per_node).v);
}

CollectiveCost CollectiveModel::ring(Collective c, double bytes, CommGroup g) const {
  const int n = g.ranks, nodes = g.nodes();
  const bool pci = node_.topology == IntraTopology::pcie;
  const double bus = busbw_for(g) / 1e9;  // GB/s
  const double steps = ring_steps(c, n);
  const double inter_steps = c == Collective::all_reduce ? 2.0 * (nodes - 1) : nodes - 1.0;
  CollectiveCost best;
  best.time = Seconds(kInf);
  for (int p = kLL; p <= kSimple; ++p) {
    if (p == kLL128 && !ll128_) continue;
    double intra_lat = pci ? kRingIntraPci[p] : kRingIntraNvl[p];
    if (nodes > 1) intra_lat = std::max(intra_lat, kNetOverhead * (p == kSimple ? 3.0 : 1.0));
    double lat = kBaseRing[p] + (steps - inter_steps) * intra_lat + inter_steps * kRingNet[p];
    if (nodes > 1 && p == kSimple && c == Collective::all_reduce) lat *= arch_ >= 1 ? 1.4 : 1.9;
    double bw = bus;
    if (p == kLL) bw = std::min(kLLMaxBw[arch_][std::min(nodes, 3) - 1], 0.5 * bus);
    if (p == kLL128) bw = 0.92 * bus;
    const double t = lat + bytes * bw_volume(c, n) / (bw * 1e3);
    if (t < best.time.v * 1e6) best = make(t, CommAlgo::ring, p, c, bytes, n);
  }
  return best;
}

CollectiveCost CollectiveModel::tree(double bytes, CommGroup g) const {
  const int nodes = g.nodes(), ppn = g.ranks_per_node;
  const bool pci = node_.topology == IntraTopology::pcie;
  const double bus = 0.92 * busbw_for(g) / 1e9;
  CollectiveCost best;
  best.time = Seconds(kInf);
  for (int p = kLL; p <= kSimple; ++p) {
    if (p == kLL128 && !ll128_) continue;
    const double intra = pci ? kTreeIntraPci[p] : kTreeIntraNvl[p];
    const double lat = kBaseTree[p] + 2.0 * ((ppn - 1) * intra + std::log2(nodes) * kTreeNet[p]);
    double bw = bus;
    if (p == kLL) bw = bus / 3.8;
    if (p == kLL128) bw = bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0);
    if (p == kSimple) bw *= tree_correction(bytes);
    const double t = lat + 2.0 * bytes / (bw * 1e3);  // tree algBw = busBw / 2
    if (t < best.time.v * 1e6) best = make(t, CommAlgo::tree, p, Collective::all_reduce, bytes, g.ranks);
  }
  return best;
}

// NVLink SHARP: the switch reduces, so each GPU sends and receives S(1 + 1/n) instead of
// 2S(n-1)/n; NCCL's model takes eff = 0.85 of the NVLink bandwidth (Hopper).
CollectiveCost CollectiveModel::nvls(double bytes, CommGroup g) const {
  const int n = g.ranks;
  const double b = kNvlsEff[arch_] * intra_busbw(g.ranks_per_node).v / 1e9;
  const double t = kNvlsIntraLat + bytes * (1.0 + 1.0 / n) / (b * 1e3);
  return make(t, CommAlgo::nvls, kSimple, Collective::all_reduce, bytes, n);
}

CollectiveCost CollectiveModel::p2p(double bytes, CommGroup g) const {
  const bool inter = g.nodes() > 1;
  double bw = inter ? inter_busbw(1).v : node_.intra_bw_per_gpu.v * link_usable_;
  if (!inter && node_.topology == IntraTopology::nvlink_mesh && node_.gpus_per_node > 1)
    bw /= node_.gpus_per_node - 1.0;  // one pair's share of the mesh links
  const bool pci = node_.topology == IntraTopology::pcie;
  const double lat_simple = kBaseRing[kSimple] + (inter ? kRingNet[kSimple] : pci ? kRingIntraPci[kSimple] : kRingIntraNvl[kSimple]);
  const double lat_ll = kBaseRing[kLL] + (inter ? kRingNet[kLL] : pci ? kRingIntraPci[kLL] : kRingIntraNvl[kLL]);
  const double t_simple = lat_simple + bytes / (bw / 1e9 * 1e3);  // bw in B/s; times in us
  const double t_ll = lat_ll + bytes / (std::min(0.5 * bw / 1e9, kLLMaxBw[arch_][inter ? 1 : 0]) * 1e3);
  if (t_ll < t_simple) return make(t_ll, CommAlgo::p2p, kLL, Collective::send_recv, bytes, 2);
  return make(t_simple, CommAlgo::p2p, kSimple, Collective::send_recv, bytes, 2);
}

CollectiveCost CollectiveModel::estimate(Collective c, Bytes size, CommGroup g) const {
  CollectiveCost none;
  if (g.ranks <= 1 || size.v <= 0) return none;
  g.ranks_per_node = std::clamp(g.ranks_per_node, 1, g.ranks);
  const int scope = g.nodes() > 1 ? 1 : 0;
  const auto& fit = eff_.collectives[static_cast<std::size_t>(c)][static_cast<std::size_t>(scope)];
  if (fit) {
    const double t = fit->latency.v + size.v * bus_factor(c, g.ranks) / fit->busbw.v;
    CollectiveCost r;
    r.time = Seconds(t);
    r.algo = CommAlgo::fit;
    r.busbw = fit->busbw;
    return r;
  }
  if (c == Collective::send_recv) return p2p(size.v, g);
  CollectiveCost best = ring(c, size.v, g);
  if (c == Collective::all_reduce) {
    const CollectiveCost t = tree(size.v, g);
    if (t.time < best.time) best = t;
    if (node_.nvls && node_.topology == IntraTopology::nvswitch && g.nodes() == 1 && kNvlsEff[arch_] > 0) {
      const CollectiveCost v = nvls(size.v, g);
      if (v.time < best.time) best = v;
    }
  }
  return best;
}

}  // namespace dsplan
