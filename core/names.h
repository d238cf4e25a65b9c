// Canonical names of the enums, for flags, JSON and output. parse_* return nullopt for an
// unknown name; callers build the diagnostic with the allowed list from *_names().
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/train_config.h"

namespace dsplan {

const char* name(Framework);
const char* name(Precision);
const char* name(Optimizer);
const char* name(Checkpointing);
const char* name(RecomputeModule);
const char* name(Offload);
const char* name(AttentionKernel);
const char* name(CrossEntropy);
const char* name(NormKernel);
const char* name(Fp8Recipe);
const char* name(Activation);
const char* name(NormKind);
const char* name(PositionKind);
const char* name(GpuArch);
const char* name(IntraTopology);

const std::vector<std::string>& framework_names();
const std::vector<std::string>& precision_names();
// --precision's values and a plan's "precision": precision_names() and "bf16-pure" (bf16 with
// TrainConfig::pure16), at index kBf16Pure.
const std::vector<std::string>& precision_flag_names();
inline constexpr int kBf16Pure = 6;
// A configuration's precision as --precision spells it (fp8, nvfp4, tf32, bf16-pure included).
std::string precision_flag(const TrainConfig& c);
const std::vector<std::string>& optimizer_names();
const std::vector<std::string>& checkpointing_names();
const std::vector<std::string>& recompute_module_names();
const std::vector<std::string>& offload_names();
const std::vector<std::string>& attention_kernel_names();
const std::vector<std::string>& cross_entropy_names();
const std::vector<std::string>& norm_kernel_names();
const std::vector<std::string>& fp8_recipe_names();
const std::vector<std::string>& activation_names();
const std::vector<std::string>& norm_names();
const std::vector<std::string>& position_names();
const std::vector<std::string>& arch_names();
const std::vector<std::string>& topology_names();

std::optional<Framework> parse_framework(std::string_view);
std::optional<Precision> parse_precision(std::string_view);
std::optional<Optimizer> parse_optimizer(std::string_view);
std::optional<Checkpointing> parse_checkpointing(std::string_view);
std::optional<RecomputeModule> parse_recompute_module(std::string_view);
// The set's module names in Megatron's order, and joined by sep ("" for the empty set).
std::vector<std::string> recompute_module_list(std::uint8_t modules);
std::string recompute_modules_text(std::uint8_t modules, char sep = ',');
std::optional<Offload> parse_offload(std::string_view);

// ASCII lower case, for matching names and words regardless of case.
std::string ascii_lower(std::string_view);

}  // namespace dsplan
