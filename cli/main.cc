// dsplan's entry point: builds the CLI11 app from the subcommands in cli/cmd_*.cc, turns
// parse errors and any escaped exception into a one-line message and exit status 2.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace dsplan::cli {

int report(const Diagnostics& errs) {
  for (Diagnostic e : errs) {
    // Third-party messages (XGBoost's) can carry a native stack trace: users get one line.
    const size_t trace = e.message.find("Stack trace:");
    if (trace != std::string::npos) e.message.resize(trace);
    while (!e.message.empty() && std::isspace(static_cast<unsigned char>(e.message.back()))) e.message.pop_back();
    std::cerr << "dsplan: error: " << printable(e.to_string()) << "\n";
  }
  return 2;
}

CLI::Validator number_check(bool integer, double lo, double hi, const std::string& allowed) {
  auto fn = [=](std::string& text) -> std::string {
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    const double v = integer ? static_cast<double>(std::strtoll(begin, &end, 10)) : std::strtod(begin, &end);
    // strtod/strtoll skip leading blanks: " 16" is not what a flag value looks like.
    // Hexadecimal ("0x64", "0x1p-3") parses too, but is not what anyone means by a size.
    // A leading '+' is refused as the list flags (--tp 1,+2) refuse it: counts are plain.
    const bool whole = !text.empty() && !std::isspace(static_cast<unsigned char>(text[0])) &&
                       text[0] != '+' && text.find_first_of("xX") == std::string::npos &&
                       end == begin + text.size() && errno == 0;
    if (whole && std::isfinite(v) && v >= lo && v <= hi) return "";
    return "invalid value \"" + text + "\" (" + allowed + ")";
  };
  return CLI::Validator(fn, "", "dsplan-number");
}

// An integer flag's text in plain decimal for CLI11's conversion, which reads a leading 0
// as octal ("--gpus 010" would be 8 GPUs, "--gpus 08" an error): the digits without their
// leading zeros. Runs after number_check, which has read the text as decimal already.
CLI::Validator decimal_integer() {
  auto fn = [](std::string& text) -> std::string {
    if (text.empty()) return "";  // number_check reports it
    std::size_t sign = text[0] == '-' || text[0] == '+' ? 1 : 0;
    if (text.size() == sign) return "";
    std::size_t first = text.find_first_not_of('0', sign);
    if (first == std::string::npos) first = text.size() - 1;  // "000" -> "0"
    if (first > sign && text.find_first_not_of("0123456789", sign) == std::string::npos)
      text = text.substr(0, sign) + text.substr(first);
    return "";
  };
  return CLI::Validator(fn, "", "dsplan-decimal");
}

void check_numeric_options(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    // A switch given twice is refused like any flag given twice (CLI11 takes a switch's
    // last occurrence by default); the message is plain_parse_message's.
    if (opt->get_expected_max() == 0 && opt->get_lnames() != std::vector<std::string>{"help"})
      opt->multi_option_policy(CLI::MultiOptionPolicy::Throw);
    const std::string type = opt->get_type_name();
    if (type != "INT" && type != "UINT" && type != "FLOAT") continue;
    if (type != "FLOAT") opt->transform(decimal_integer());
    try {
      opt->get_validator("dsplan-number");
      continue;  // the command gave this flag its own range and allowed values
    } catch (const CLI::OptionNotFound&) {
    }
    const bool integer = type != "FLOAT";
    const double lo = type == "UINT" ? 0 : integer ? -2147483648.0 : -HUGE_VAL;
    const double hi = integer ? 2147483647.0 : HUGE_VAL;
    opt->check(number_check(integer, lo, hi, integer ? "an integer" : "a number"));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) check_numeric_options(*sub);
}

// The first long option in argv[2..] that the chosen command does not have, as a message
// with the nearest real one ("--seq-len" -> "--seq"), or "" when every option is known.
// CLI11 reports such a flag as "arguments were not expected", or not at all when a required
// flag is missing too ("--gpu 16" reads as "--gpus is required").
std::string unknown_option_message(CLI::App& app, int argc, char** argv) {
  if (argc < 3) return "";
  CLI::App* sub = nullptr;
  for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; }))
    if (s->get_name() == argv[1]) sub = s;
  if (sub == nullptr) return "";
  int first = 2;  // a nested command ("calibrate fit") has its own options
  for (CLI::App* nested : sub->get_subcommands([](CLI::App*) { return true; }))
    if (nested->get_name() == argv[2]) sub = nested, first = 3;
  std::vector<std::string> names;
  for (const CLI::Option* opt : sub->get_options())
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
  for (int i = first; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;  // the rest are positional values
    if (word.size() < 3 || word.compare(0, 2, "--") != 0) continue;
    const std::string name = word.substr(0, word.find('='));
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    // The user's word is escaped here, not the message: its second line is ours.
    const std::string command = first == 3 ? std::string(argv[1]) + " " + sub->get_name() : sub->get_name();
    std::string msg = "unknown option " + dsplan::printable(name) + " for '" + command + "'";
    std::optional<std::string> near = dsplan::closest_match(name, names);
    for (const std::string& n : names)  // a longer spelling of a real flag: "--seq-len"
      if (!near && name.compare(0, n.size() + 1, n + "-") == 0) near = n;
    if (near) msg += " (did you mean " + *near + "?)";
    return msg + "\nRun 'dsplan " + command + " --help' for its options.";
  }
  return "";
}

// CLI11's wording for a flag given twice ("--gpus: At Most 1 required but received 2")
// reads like a count of values; say what happened.
std::string plain_parse_message(const std::string& what) {
  const std::string marker = ": At Most 1 required but received ";
  const size_t at = what.find(marker);
  if (at == std::string::npos) return what;
  const std::string times = what.substr(at + marker.size());
  return what.substr(0, at) + " given " + times + " times: give it once";
}

}  // namespace dsplan::cli

int main(int argc, char** argv) {
  // A reader that closes the pipe early (`dsplan estimate ... | head -1`) makes a write fail
  // with EPIPE instead of killing the process: the closed output is then reported, exit 1.
  std::signal(SIGPIPE, SIG_IGN);
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
  add_compare(app, exit_code);
  check_numeric_options(app);
  // Help and version text that did not reach standard output is a failure too.
  auto printed = [](int code) {
    std::cout.flush();
    if (code == 0 && (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout))) {
      std::cerr << "dsplan: error: could not write the output to standard output (disk full or closed)\n";
      return 1;
    }
    return code;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return printed(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return printed(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return printed(app.exit(e));
  } catch (const CLI::ParseError& e) {
    // CLI11 reads an unknown first word as a missing subcommand: name it and the commands.
    if (argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty()) {
      std::string names;
      for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
        names += (names.empty() ? "" : ", ") + sub->get_name();
      std::cerr << "dsplan: error: unknown command \"" << dsplan::printable(argv[1])
                << "\" (one of: " << names << ")\n";
      return 2;
    }
    if (const std::string unknown = unknown_option_message(app, argc, argv); !unknown.empty()) {
      std::cerr << "dsplan: error: " << unknown << "\n";
      return 2;
    }
    std::cerr << "dsplan: error: " << dsplan::printable(plain_parse_message(e.what())) << "\n";
    // A bad value names its flag and the allowed values: one line. A malformed command line
    // (a missing or excluded flag) also points at the usage (docs/manual.md, "Exit status").
    const bool bad_value = dynamic_cast<const CLI::ValidationError*>(&e) != nullptr ||
                           dynamic_cast<const CLI::ConversionError*>(&e) != nullptr;
    if (!bad_value) std::cerr << "Run 'dsplan --help' or 'dsplan <command> --help' for usage.\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dsplan: internal error: " << dsplan::printable(e.what()) << "\n";
    return 2;
  }
  // Output that did not reach its file (a full disk, a closed descriptor) is a failure: a
  // truncated plan.json must not look like a success.
  const int written = printed(0);
  return exit_code != 0 ? exit_code : written;
}
