// Placeholder for 'dsplan calibrate' until its owner lands it.
#include "cli/commands.h"

namespace dsplan::cli {

void add_calibrate(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("calibrate", "(not yet available)");
  sub->callback([&exit_code] { exit_code = report({Diagnostic{"", "", "'calibrate' is not available in this build", ""}}); });
}

}  // namespace dsplan::cli
