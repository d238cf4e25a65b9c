// Placeholder for 'dsplan models' until its owner lands it.
#include "cli/commands.h"

namespace dsplan::cli {

void add_models(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("models", "(not yet available)");
  sub->callback([&exit_code] { exit_code = report({Diagnostic{"", "", "'models' is not available in this build", ""}}); });
}

}  // namespace dsplan::cli
