// Rewriting a user's launch command for one experiment, as the DeepSpeed autotuner does:
// the ds_config path after --deepspeed_config / --deepspeed is replaced by the
// experiment's, and script flags named by arg_mappings get the experiment's values.
// Works on argv words (no shell parsing); flags may be "--flag VALUE" or "--flag=VALUE".
#pragma once

#include <map>
#include <string>
#include <vector>

namespace dsplan {

// Replaces the value of every --deepspeed_config, and of --deepspeed when it is followed by
// a value (a word not starting with "-"), with `path`. Returns how many were replaced.
int replace_ds_config_path(std::vector<std::string>& argv, const std::string& path);

// For each (key -> flag) in `mappings` whose key has a value in `values`, sets the flag in
// argv: replaces the existing value, or appends "flag value" when the flag is absent. A
// boolean flag (value "true"/"false") is added or removed without a value.
void apply_arg_mappings(std::vector<std::string>& argv,
                        const std::map<std::string, std::string>& mappings,
                        const std::map<std::string, std::string>& values);

// The words joined with spaces, each quoted for a POSIX shell when it needs it.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace dsplan
