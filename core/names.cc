// Name tables for the enums in train_config.h, model_spec.h and hardware_spec.h.
#include "core/names.h"

#include <algorithm>
#include <cctype>

namespace dsplan {
namespace {

template <class E>
std::optional<E> lookup(const std::vector<std::string>& names, std::string_view s) {
  auto it = std::find(names.begin(), names.end(), s);
  if (it == names.end()) return std::nullopt;
  return static_cast<E>(it - names.begin());
}

}  // namespace

#define DSPLAN_NAMES(Enum, fn, ...)                                   \
  const std::vector<std::string>& fn() {                              \
    static const std::vector<std::string> v{__VA_ARGS__};             \
    return v;                                                         \
  }                                                                   \
  const char* name(Enum e) { return fn()[static_cast<size_t>(e)].c_str(); }

DSPLAN_NAMES(Framework, framework_names, "deepspeed", "megatron", "fsdp", "ddp")
DSPLAN_NAMES(Precision, precision_names, "fp32", "fp16", "bf16", "fp8", "nvfp4", "tf32")
DSPLAN_NAMES(Optimizer, optimizer_names, "adam", "sgd", "adafactor", "adam-8bit")
DSPLAN_NAMES(Checkpointing, checkpointing_names, "none", "selective", "full", "block")
DSPLAN_NAMES(RecomputeModule, recompute_module_names, "core_attn", "moe_act", "layernorm", "mla_up_proj",
             "mlp", "moe", "shared_experts")
DSPLAN_NAMES(Offload, offload_names, "none", "optimizer", "all")
DSPLAN_NAMES(AttentionKernel, attention_kernel_names, "auto", "fa2", "cudnn", "fa3", "triton")
DSPLAN_NAMES(CrossEntropy, cross_entropy_names, "eager", "fused", "jit-fused")
DSPLAN_NAMES(NormKernel, norm_kernel_names, "auto", "eager", "fused", "torch")
DSPLAN_NAMES(Fp8Recipe, fp8_recipe_names, "delayed", "tensorwise", "mxfp8", "nvfp4")
DSPLAN_NAMES(Activation, activation_names, "gelu", "relu", "silu")
DSPLAN_NAMES(NormKind, norm_names, "layernorm", "rmsnorm")
DSPLAN_NAMES(PositionKind, position_names, "learned", "rotary", "alibi")
DSPLAN_NAMES(GpuArch, arch_names, "volta", "ampere", "hopper", "blackwell")
DSPLAN_NAMES(IntraTopology, topology_names, "nvswitch", "nvlink-mesh", "pcie")
#undef DSPLAN_NAMES

std::optional<Framework> parse_framework(std::string_view s) { return lookup<Framework>(framework_names(), s); }
std::optional<Precision> parse_precision(std::string_view s) { return lookup<Precision>(precision_names(), s); }

const std::vector<std::string>& precision_flag_names() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> n = precision_names();
    n.push_back("bf16-pure");
    return n;
  }();
  return v;
}

std::string precision_flag(const TrainConfig& c) {
  if (c.pure16_model() && c.precision == Precision::bf16) return precision_flag_names()[kBf16Pure];
  return name(c.linear_precision());  // fp8, nvfp4: bf16 with such linears; tf32: fp32
}
std::optional<Optimizer> parse_optimizer(std::string_view s) { return lookup<Optimizer>(optimizer_names(), s); }
std::optional<Checkpointing> parse_checkpointing(std::string_view s) { return lookup<Checkpointing>(checkpointing_names(), s); }
std::optional<RecomputeModule> parse_recompute_module(std::string_view s) {
  return lookup<RecomputeModule>(recompute_module_names(), s);
}
std::vector<std::string> recompute_module_list(std::uint8_t modules) {
  std::vector<std::string> out;
  for (int i = 0; i < kRecomputeModules; ++i)
    if (modules & module_bit(RecomputeModule(i))) out.push_back(name(RecomputeModule(i)));
  return out;
}
std::string recompute_modules_text(std::uint8_t modules, char sep) {
  std::string out;
  for (const std::string& n : recompute_module_list(modules)) out += (out.empty() ? "" : std::string(1, sep)) + n;
  return out;
}
std::optional<Offload> parse_offload(std::string_view s) { return lookup<Offload>(offload_names(), s); }

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (auto& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace dsplan
