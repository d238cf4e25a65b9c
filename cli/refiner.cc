// The finalists' evaluator: the step simulator over the cost model's StepCosts. The
// closed form supplies the FLOP counts (the simulator times, it does not count work);
// when the simulator rejects the costs (it should not) the closed form stands.
#include <algorithm>
#include <iomanip>
#include <map>
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
    // The path can hold thousands of tasks: summarise it by kind of task (the word after
    // "rankN/"), largest total first.
    std::map<std::string, std::pair<double, int>> kinds;
    for (const auto& st : sim->critical_path) {
      std::string k = st.task.substr(st.task.find('/') == std::string::npos ? 0 : st.task.find('/') + 1);
      k = k.substr(0, k.find(' '));
      kinds[k].first += st.duration.v;
      kinds[k].second += 1;
    }
    std::vector<std::pair<std::string, std::pair<double, int>>> sorted(kinds.begin(), kinds.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.second.first > y.second.first; });
    b.critical_path.push_back(std::to_string(sim->critical_path.size()) + " tasks on the critical path, rank " +
                              std::to_string(sim->critical_rank) + ":");
    if (sim->micro_batches_simulated < cfg.grad_accum)
      b.critical_path.push_back("(of a " + std::to_string(sim->micro_batches_simulated) +
                                "-micro-batch window; the step's " + std::to_string(cfg.grad_accum) +
                                " micro-batches extend it linearly, docs/model.md §5)");
    for (const auto& [k, v] : sorted) {
      std::ostringstream line;
      line << std::fixed << std::setprecision(1) << k << " x" << v.second << ": " << 1e3 * v.first << " ms";
      b.critical_path.push_back(line.str());
    }
    return b;
  };
}

}  // namespace dsplan::cli
