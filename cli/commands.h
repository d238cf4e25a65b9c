// Subcommand registration. Each cli/cmd_*.cc adds one subcommand to the CLI11 app and,
// when that subcommand runs, stores its exit status in `exit_code`:
//   0 success, 1 a run-time failure (e.g. a benchmark that could not run), 2 bad input.
// Commands print to stdout (results) and stderr (diagnostics); nothing else in dsplan does.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/diagnostic.h"
#include "core/model_spec.h"

namespace dsplan::cli {

void add_estimate(CLI::App& app, int& exit_code);
void add_validate(CLI::App& app, int& exit_code);
void add_models(CLI::App& app, int& exit_code);
void add_hw(CLI::App& app, int& exit_code);
void add_bench(CLI::App& app, int& exit_code);
void add_calibrate(CLI::App& app, int& exit_code);
void add_confirm(CLI::App& app, int& exit_code);
void add_compare(CLI::App& app, int& exit_code);

// Prints each diagnostic as "dsplan: error: ..." on stderr and returns 2.
int report(const Diagnostics& errs);
// "sliding window of 4096 keys in 21 of 42 layers" (cmd_models.cc), for `models` and the
// estimate assumption.
std::string window_phrase(const ModelSpec& m);

// A CLI11 check that the text of a numeric flag is a number (an integer when `integer`) in
// [lo, hi], failing with '--flag: invalid value "abc" (<allowed>)' before CLI11's own
// conversion, whose message names neither the allowed values nor the unit.
CLI::Validator number_check(bool integer, double lo, double hi, const std::string& allowed);

// Adds a generic number_check to every INT/FLOAT option of `app` and its subcommands that
// has no check of its own, so no numeric flag answers "Could not convert".
void check_numeric_options(CLI::App& app);

}  // namespace dsplan::cli
