// Default datasheet->delivered efficiencies per GPU architecture, used when no calibration
// profile is given. Every number is a documented starting point (docs/model.md §4 Step time,
// "Default efficiencies"), not a fit to any validation row; `dsplan calibrate` replaces
// them with measured values.
#pragma once

#include "core/efficiency.h"
#include "core/hardware_spec.h"

namespace dsplan {

Efficiency default_efficiency(const GpuSpec& gpu);

}  // namespace dsplan
