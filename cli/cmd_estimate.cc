// Placeholder for 'dsplan estimate' until its owner lands it.
#include "cli/commands.h"

namespace dsplan::cli {

void add_estimate(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("estimate", "(not yet available)");
  sub->callback([&exit_code] { exit_code = report({Diagnostic{"", "", "'estimate' is not available in this build", ""}}); });
}

}  // namespace dsplan::cli
