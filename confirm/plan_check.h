// Structural checks of a plan that confirm is asked to run: the plan's GPU must be one
// dsplan knows, and each configuration must be a layout the plan's model and GPUs allow
// (tp dividing the heads, key/value heads and GPUs; pp within the layers; tp x pp x dp =
// the plan's GPUs; vpp that interleaves whole layers; a global_batch, when given, of
// micro_batch x dp x grad_accum). Every plan `dsplan estimate --json` writes passes them;
// a hand-edited one that does not (tp 3 on 2 GPUs, dp 64 on 2 GPUs) is refused before any
// experiment is launched, naming the JSON path and the allowed values.
#pragma once

#include <string>

#include "confirm/plan.h"
#include "core/diagnostic.h"
#include "core/json_reader.h"

namespace dsplan {

// `hardware` is the plan's "/hardware" object: its "gpu" must be a GPU preset by name, or
// the whole GPU object estimate writes for a cluster file's own GPU.
Diagnostics check_plan_gpu(const Json& hardware, const std::string& file);

// The first structural problem of `c` (parsed from `cj`, the plan's element at JSON
// pointer `path`) for the plan's model and GPU count; empty when there is none.
Diagnostics check_candidate_layout(const Candidate& c, const Json& cj, const Plan& plan,
                                   const std::string& file, const std::string& path);

}  // namespace dsplan
