// Driver device names -> hwdb GPU preset names. Matching is on lower-cased substrings:
// family (v100/a100/h100/h200/b200/gb200/b300/gb300), form factor ("pcie" in the name) and memory size.
#include "calibrate/gpu_names.h"

#include "core/names.h"

namespace dsplan {

std::optional<std::string> gpu_preset_for_device(std::string_view device_name) {
  const std::string s = ascii_lower(device_name);
  auto has = [&](const char* x) { return s.find(x) != std::string::npos; };
  const bool pcie = has("pcie");
  if (has("h200")) return "h200-141gb";
  if (has("gb300")) return "gb300-288gb";  // Grace Blackwell Ultra ("NVIDIA GB300 NVL"): 288 GB, 1,400 W
  if (has("b300")) return "b300-288gb";    // "NVIDIA B300 SXM6 AC"
  if (has("gb200")) return "gb200-186gb";  // Grace Blackwell: its own part (152 SMs, 186 GB, 1,200 W)
  if (has("b200")) return "b200-180gb";
  if (has("h100")) {
    if (has("nvl")) return std::nullopt;  // H100 NVL (94 GB) has no preset
    return pcie ? "h100-pcie-80gb" : "h100-80gb";
  }
  if (has("a100")) {
    const bool gb80 = has("80gb");
    if (pcie) return gb80 ? "a100-pcie-80gb" : "a100-pcie-40gb";
    return gb80 ? "a100-80gb" : "a100-40gb";
  }
  if (has("v100")) {
    if (pcie) return has("32gb") ? std::nullopt : std::optional<std::string>("v100-pcie-16gb");
    return has("32gb") ? "v100-32gb" : "v100-16gb";
  }
  return std::nullopt;
}

}  // namespace dsplan
