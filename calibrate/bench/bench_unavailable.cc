// The Bench of a build without the CUDA toolkit: every call returns the same diagnostic,
// which says how to get a build that can measure. Compiled instead of bench/cuda/*.cu.
#include "calibrate/bench/bench.h"

namespace dsplan {
namespace {

Diagnostic unavailable() {
  return Diagnostic{"", "",
                    "built without CUDA: rebuild with the CUDA toolkit installed "
                    "(cmake -DDSPLAN_WITH_CUDA=ON)",
                    "'dsplan calibrate fit --records FILE' refits saved records without a GPU"};
}

class UnavailableBench final : public Bench {
 public:
  Expected<DeviceInfo> probe() override { return unavailable(); }
  Expected<GemmRecord> gemm(const GemmCase&) override { return unavailable(); }
  Expected<BandwidthRecord> bandwidth(BandwidthKind, double, const Repeats&) override {
    return unavailable();
  }
  Expected<CollectiveRecord> collective(Collective, CommScope, double, const Repeats&) override {
    return unavailable();
  }
};

}  // namespace

std::unique_ptr<Bench> make_bench() { return std::make_unique<UnavailableBench>(); }

}  // namespace dsplan
