// Which hwdb GPU preset a device is, from the name the CUDA driver reports (e.g.
// "NVIDIA A100-SXM4-80GB" -> "a100-80gb"), so `dsplan calibrate` can fit against the right
// datasheet without --gpu. Only a guess: fit_records() still checks the SM count.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace dsplan {

std::optional<std::string> gpu_preset_for_device(std::string_view device_name);

}  // namespace dsplan
