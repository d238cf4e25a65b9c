// dsplan's entry point: builds the CLI11 app from the subcommands in cli/cmd_*.cc, turns
// parse errors and any escaped exception into a one-line message and exit status 2.
#include <cstdio>
#include <exception>
#include <iostream>

#include "cli/commands.h"

namespace dsplan::cli {

int report(const Diagnostics& errs) {
  for (const auto& e : errs) std::cerr << "dsplan: error: " << e.to_string() << "\n";
  return 2;
}

}  // namespace dsplan::cli

int main(int argc, char** argv) {
  CLI::App app{"dsplan: plan transformer training configurations without a GPU"};
  app.set_version_flag("--version", std::string(DSPLAN_VERSION) + " (" DSPLAN_GIT_HASH ")");
  app.require_subcommand(1);
  int exit_code = 0;
  using namespace dsplan::cli;
  add_estimate(app, exit_code);
  add_validate(app, exit_code);
  add_models(app, exit_code);
  add_hw(app, exit_code);
  add_bench(app, exit_code);
  add_calibrate(app, exit_code);
  add_confirm(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "dsplan: error: " << e.what() << "\n"
              << "Run 'dsplan --help' or 'dsplan <command> --help' for usage.\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dsplan: internal error: " << e.what() << "\n";
    return 2;
  }
  std::fflush(stdout);
  return exit_code;
}
