// Placeholder for 'dsplan confirm' until its owner lands it.
#include "cli/commands.h"

namespace dsplan::cli {

void add_confirm(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("confirm", "(not yet available)");
  sub->callback([&exit_code] { exit_code = report({Diagnostic{"", "", "'confirm' is not available in this build", ""}}); });
}

}  // namespace dsplan::cli
