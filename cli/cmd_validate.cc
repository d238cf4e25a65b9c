// Placeholder for 'dsplan validate' until its owner lands it.
#include "cli/commands.h"

namespace dsplan::cli {

void add_validate(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("validate", "(not yet available)");
  sub->callback([&exit_code] { exit_code = report({Diagnostic{"", "", "'validate' is not available in this build", ""}}); });
}

}  // namespace dsplan::cli
