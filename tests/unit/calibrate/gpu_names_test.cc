// Device names as the CUDA driver reports them -> hwdb GPU presets.
#include <gtest/gtest.h>

#include "calibrate/gpu_names.h"

namespace dsplan {
namespace {

TEST(GpuNames, DriverNamesMapToPresets) {
  EXPECT_EQ(gpu_preset_for_device("NVIDIA A100-SXM4-80GB"), "a100-80gb");
  EXPECT_EQ(gpu_preset_for_device("NVIDIA A100-SXM4-40GB"), "a100-40gb");
  EXPECT_EQ(gpu_preset_for_device("NVIDIA A100 80GB PCIe"), "a100-pcie-80gb");
  EXPECT_EQ(gpu_preset_for_device("NVIDIA A100-PCIE-40GB"), "a100-pcie-40gb");
  EXPECT_EQ(gpu_preset_for_device("NVIDIA H100 80GB HBM3"), "h100-80gb");
  EXPECT_EQ(gpu_preset_for_device("NVIDIA H100 PCIe"), "h100-pcie-80gb");
  EXPECT_EQ(gpu_preset_for_device("NVIDIA H200"), "h200-141gb");
  EXPECT_EQ(gpu_preset_for_device("NVIDIA B200"), "b200-180gb");
  EXPECT_EQ(gpu_preset_for_device("Tesla V100-SXM2-32GB"), "v100-32gb");
  EXPECT_EQ(gpu_preset_for_device("Tesla V100-PCIE-16GB"), "v100-pcie-16gb");
}

TEST(GpuNames, UnknownDevicesAreNotGuessed) {
  EXPECT_FALSE(gpu_preset_for_device("NVIDIA H100 NVL"));
  EXPECT_EQ(gpu_preset_for_device("NVIDIA GB200"), "gb200-186gb");  // its own part, not the DGX B200's
  EXPECT_EQ(gpu_preset_for_device("NVIDIA GB300 NVL"), "gb300-288gb");  // not the HGX B300's part
  EXPECT_EQ(gpu_preset_for_device("NVIDIA B300 SXM6 AC"), "b300-288gb");
  EXPECT_FALSE(gpu_preset_for_device("NVIDIA GeForce RTX 4090"));
  EXPECT_FALSE(gpu_preset_for_device("synthetic"));
}

}  // namespace
}  // namespace dsplan
