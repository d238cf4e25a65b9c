// Placeholder for 'dsplan bench' until its owner lands it.
#include "cli/commands.h"

namespace dsplan::cli {

void add_bench(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("bench", "(not yet available)");
  sub->callback([&exit_code] { exit_code = report({Diagnostic{"", "", "'bench' is not available in this build", ""}}); });
}

}  // namespace dsplan::cli
