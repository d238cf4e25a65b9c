// Placeholder for 'dsplan hw' until its owner lands it.
#include "cli/commands.h"

namespace dsplan::cli {

void add_hw(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("hw", "(not yet available)");
  sub->callback([&exit_code] { exit_code = report({Diagnostic{"", "", "'hw' is not available in this build", ""}}); });
}

}  // namespace dsplan::cli
