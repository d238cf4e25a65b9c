// The finalists' evaluator: the step simulator over the cost model's StepCosts.
#include "cli/estimate_options.h"

namespace dsplan::cli {

std::function<StepTimeBreakdown(const TrainConfig&)> make_refiner(const PlanRequest&) {
  return {};
}

}  // namespace dsplan::cli
