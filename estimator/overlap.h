// Compute and a collective sharing one GPU (docs/model.md §4.6, "Overlap contention").
// A collective overlapped with compute is not free: NCCL runs one CTA per channel on the
// SMs and streams its data through HBM, so the compute kernels beside it progress at
// (1 - loss) of their own rate while it runs. The collective is assumed not to slow (its
// links bound it). For a compute window C with M of collective running from its start:
//   M >= C / (1 - loss): the compute finishes under the collective, the window is M;
//   otherwise it has done (1 - loss) M when the collective ends, the window is C + loss M;
// so the window is max(M, C + loss M) where perfect overlap gives max(M, C).
// Header-only: the closed form (estimator/time) and the simulator share these.
#pragma once

#include <algorithm>

#include "core/units.h"

namespace dsplan {

inline Seconds contended_window(Seconds compute, Seconds comm, double loss) {
  return max(comm, compute + comm * loss);
}

// ZeRO-3 / FSDP parameter gathers next to `layers` layers of `layer` compute each.
// Without prefetch every gather blocks; with it gather k+1 runs beside layer k (n - 1
// windows), the first gather and the last layer alone. `exposed` is the time the step
// waits for gathers with perfect overlap; `contention` is what the compute loses beside
// them.
struct GatherOverlap {
  Seconds exposed;
  Seconds contention;
};

inline GatherOverlap gather_overlap(Seconds gather, Seconds layer, int layers, bool prefetch,
                                    double loss) {
  if (gather.v <= 0.0 || layers <= 0) return {};
  if (!prefetch) return {gather * layers, Seconds{}};
  const Seconds exposed = max(gather, layer) * layers + min(gather, layer) - layer * layers;
  const Seconds contention =
      (contended_window(layer, gather, loss) - max(gather, layer)) * double(layers - 1);
  return {exposed, contention};
}

}  // namespace dsplan
