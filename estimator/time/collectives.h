// Collective time with NCCL's own cost structure (NVIDIA/nccl src/graph/tuning.cc as
// summarised in shared/reference/hardware-and-comm.md §2): for each algorithm (ring, tree,
// NVLS) and protocol (LL, LL128, Simple) time = latency + bytes / bandwidth, and the
// fastest pair wins, as NCCL's tuner picks it. Bandwidths come from the node description:
// NVLink/NVSwitch (or PCIe) inside a node, the node's NICs shared by the groups that run
// concurrently across nodes (ring rule busbw ~ min(B_intra, eta K B_NIC)). A measured
// alpha-beta fit in Efficiency::collectives replaces the model for its (collective, scope).
// Sizes are nccl-tests' S: the all-reduce buffer, the whole all-gather output or
// reduce-scatter input, the broadcast buffer, the bytes sent by one send/recv.
#pragma once

#include "core/efficiency.h"
#include "core/hardware_spec.h"
#include "core/units.h"

namespace dsplan {

// `ranks` GPUs of which `ranks_per_node` share a node (a TP group inside a node: (tp, tp);
// a DP group of stride tp*pp on 8-GPU nodes with tp*pp >= 8: (dp, 1)).
struct CommGroup {
  int ranks = 1;
  int ranks_per_node = 1;
  int nodes() const { return (ranks + ranks_per_node - 1) / ranks_per_node; }
};

enum class CommAlgo : std::uint8_t { ring, tree, nvls, p2p, fit };
enum class CommProto : std::uint8_t { ll, ll128, simple };

struct CollectiveCost {
  Seconds time;
  CommAlgo algo = CommAlgo::ring;
  CommProto proto = CommProto::simple;
  BytesPerSecond busbw;  // nccl-tests bus bandwidth this time implies
};

// nccl-tests bus-bandwidth factor: busbw = (S / t) x factor.
double bus_factor(Collective c, int ranks);

class CollectiveModel {
 public:
  CollectiveModel(const SystemSpec& node, const Efficiency& eff);
  CollectiveCost estimate(Collective c, Bytes size, CommGroup g) const;
  Seconds time(Collective c, Bytes size, CommGroup g) const { return estimate(c, size, g).time; }

  // Usable bus bandwidth of a group: NVLink/PCIe inside a node, NIC share across nodes.
  BytesPerSecond intra_busbw(int ranks_per_node) const;
  BytesPerSecond inter_busbw(int ranks_per_node) const;

 private:
  CollectiveCost ring(Collective c, double bytes, CommGroup g) const;
  CollectiveCost tree(double bytes, CommGroup g) const;
  CollectiveCost nvls(double bytes, CommGroup g) const;
  CollectiveCost p2p(double bytes, CommGroup g) const;
  double busbw_for(CommGroup g) const;

  SystemSpec node_;
  Efficiency eff_;
  int arch_ = 1;           // 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell (NCCL's per-arch tables)
  bool ll128_ = true;      // NCCL enables LL128 only on NVLink-class paths
  double link_usable_ = 0.8;
};

}  // namespace dsplan
