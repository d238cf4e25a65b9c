// Human-readable descriptions of one evaluated configuration, shared by `estimate
// --explain` and `validate --explain`: a one-line label and the memory/time breakdown
// with the simulator's critical path. Printing only; no modelling.
#pragma once

#include <iosfwd>
#include <string>

#include "estimator/search/planner.h"

namespace dsplan::cli {

// "z1 tp2 pp1 dp8 mbs4 gas2 ckpt=full flash".
std::string describe_config(const Evaluation& e);

// Memory per GPU, step-time breakdown and critical path of `e`, each line after `indent`.
void print_breakdown(std::ostream& os, const Evaluation& e, const std::string& indent = "");

}  // namespace dsplan::cli
