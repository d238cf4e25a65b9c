// Subcommand registration. Each cli/cmd_*.cc adds one subcommand to the CLI11 app and,
// when that subcommand runs, stores its exit status in `exit_code`:
//   0 success, 1 a run-time failure (e.g. a benchmark that could not run), 2 bad input.
// Commands print to stdout (results) and stderr (diagnostics); nothing else in dsplan does.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "core/diagnostic.h"

namespace dsplan::cli {

void add_estimate(CLI::App& app, int& exit_code);
void add_validate(CLI::App& app, int& exit_code);
void add_models(CLI::App& app, int& exit_code);
void add_hw(CLI::App& app, int& exit_code);
void add_bench(CLI::App& app, int& exit_code);
void add_calibrate(CLI::App& app, int& exit_code);
void add_confirm(CLI::App& app, int& exit_code);

// Prints each diagnostic as "dsplan: error: ..." on stderr and returns 2.
int report(const Diagnostics& errs);

}  // namespace dsplan::cli
