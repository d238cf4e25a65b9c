// `estimate --out DIR`: for each of the top K configurations that fit, a folder with
// ds_config.json, the deepspeed launch command and Megatron(-DeepSpeed) arguments, plus
// DIR/plan.json (the --json document). Written to a sibling temporary folder first and
// renamed into place, so an error never leaves partial output.
#pragma once

#include <string>

#include "cli/estimate_options.h"

namespace dsplan::cli {

Expected<bool> write_out_dir(const std::string& dir, const EstimatePlan& plan);

}  // namespace dsplan::cli
