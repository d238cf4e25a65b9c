// The finalists' evaluator: the step simulator over the cost model's StepCosts. The
// closed form supplies the FLOP counts (the simulator times, it does not count work);
// when the simulator rejects the costs (it should not) the closed form stands.
#include <algorithm>
#include <iomanip>
#include <sstream>

#include "cli/estimate_options.h"
#include "simulator/simulate.h"

namespace dsplan::cli {

std::function<StepTimeBreakdown(const TrainConfig&)> make_refiner(const PlanRequest& req) {
  auto model = std::make_shared<StepTimeModel>(req.model, req.cluster, req.efficiency);
  return [model](const TrainConfig& cfg) {
    StepTimeBreakdown closed = model->estimate(cfg);
    auto sim = simulate_step(model->costs(cfg));
    if (!sim) return closed;
    StepTimeBreakdown b = sim->breakdown;
    b.step = sim->step;
    b.model_flops = closed.model_flops;
    b.hw_flops = closed.hw_flops;
    b.critical_path.clear();
    // The path can hold thousands of tasks: show its length and its longest steps.
    auto steps = sim->critical_path;
    std::sort(steps.begin(), steps.end(), [](const auto& x, const auto& y) { return x.duration > y.duration; });
    b.critical_path.push_back(std::to_string(sim->critical_path.size()) + " tasks on the critical path (rank " +
                              std::to_string(sim->critical_rank) + "); longest:");
    for (size_t i = 0; i < steps.size() && i < 8; ++i) {
      std::ostringstream line;
      line << std::fixed << std::setprecision(3) << steps[i].task << ": " << in_ms(steps[i].duration) << " ms";
      b.critical_path.push_back(line.str());
    }
    return b;
  };
}

}  // namespace dsplan::cli
