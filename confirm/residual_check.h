// Checks that a residual model file (the XGBoost JSON that `dsplan confirm` writes) has the
// structure XGBoost's loader assumes without checking, so that a damaged file is an error
// rather than a crash inside XGBoost.
#pragma once

#include <cstddef>
#include <string>

#include "core/diagnostic.h"
#include "core/json_reader.h"

namespace dsplan {

// Empty when `doc` is a single-output, numerical-split gbtree model over `features` inputs
// whose every tree is well formed; else one diagnostic naming the first bad part.
Diagnostics check_residual_structure(const Json& doc, const std::string& file, std::size_t features);

}  // namespace dsplan
