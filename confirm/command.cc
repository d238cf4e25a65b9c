// Launch-command rewriting for confirm experiments (see command.h).
#include "confirm/command.h"

#include "confirm/ds_config.h"

namespace dsplan {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// Index of the word holding `flag` ("--flag" or "--flag=..."), or -1.
int find_flag(const std::vector<std::string>& argv, const std::string& flag) {
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == flag || starts_with(argv[i], flag + "=")) return static_cast<int>(i);
  }
  return -1;
}

bool is_value(const std::vector<std::string>& argv, size_t i) {
  return i < argv.size() && !starts_with(argv[i], "-");
}

}  // namespace

int replace_ds_config_path(std::vector<std::string>& argv, const std::string& path) {
  int replaced = 0;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& w = argv[i];
    for (const std::string flag : {"--deepspeed_config", "--deepspeed"}) {
      if (starts_with(w, flag + "=")) {
        argv[i] = flag + "=" + path;
        ++replaced;
        break;
      }
      if (w == flag && is_value(argv, i + 1)) {
        argv[i + 1] = path;
        ++replaced;
        ++i;
        break;
      }
    }
  }
  return replaced;
}

void apply_arg_mappings(std::vector<std::string>& argv,
                        const std::map<std::string, std::string>& mappings,
                        const std::map<std::string, std::string>& values) {
  for (const auto& [key, flag] : mappings) {
    auto v = values.find(key);
    if (v == values.end() || flag.empty()) continue;
    const std::string& value = v->second;
    int at = find_flag(argv, flag);
    if (value == "true" || value == "false") {
      if (at >= 0) argv.erase(argv.begin() + at);
      if (value == "true") argv.push_back(flag);
      continue;
    }
    if (at < 0) {
      argv.push_back(flag);
      argv.push_back(value);
    } else if (argv[at] != flag) {
      argv[at] = flag + "=" + value;
    } else if (is_value(argv, at + 1)) {
      argv[at + 1] = value;
    } else {
      argv.insert(argv.begin() + at + 1, value);
    }
  }
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& w : argv) {
    if (!out.empty()) out += ' ';
    out += shell_quote(w);
  }
  return out;
}

}  // namespace dsplan
