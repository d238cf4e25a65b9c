// Every shipped preset loads, is named after its file, cites a source, and gives the
// datasheet peaks and capacities of shared/reference/hardware-and-comm.md §1.
#include <gtest/gtest.h>

#include "core/embedded.h"
#include "hwdb/hwdb.h"
#include "hwdb/internal.h"

namespace dsplan {
namespace {

double peak_fp16(const std::string& gpu) { return in_TFLOPS(gpu_preset(gpu)->matmul_peak(Precision::fp16)); }

TEST(HwdbPresets, DenseFp16PeaksMatchTheDatasheets) {
  // 80 SMs x 1024 FLOP/clk x 1.53 GHz = 125.34 TFLOP/s
  EXPECT_NEAR(peak_fp16("v100-16gb"), 125.3, 0.05);
  EXPECT_NEAR(peak_fp16("v100-32gb"), 125.3, 0.05);
  // 108 x 2048 x 1.41 GHz = 311.87
  EXPECT_NEAR(peak_fp16("a100-40gb"), 311.9, 0.05);
  EXPECT_NEAR(peak_fp16("a100-80gb"), 311.9, 0.05);
  EXPECT_NEAR(peak_fp16("a100-pcie-80gb"), 311.9, 0.05);
  // 132 x 4096 x 1.83 GHz = 989.40
  EXPECT_NEAR(peak_fp16("h100-80gb"), 989.4, 0.05);
  EXPECT_NEAR(peak_fp16("h200-141gb"), 989.4, 0.05);
  // PCIe parts: 80 x 1024 x 1.38 = 113.0 (datasheet 112); 114 x 4096 x 1.62 = 756.4 (756)
  EXPECT_NEAR(peak_fp16("v100-pcie-16gb"), 113.0, 0.1);
  EXPECT_NEAR(peak_fp16("h100-pcie-80gb"), 756.4, 0.1);
  // B200: 148 x 8192 x 1.856 GHz = 2250.2 (HGX B200 sheet: 2,250 dense at 1,000 W)
  EXPECT_NEAR(peak_fp16("b200-180gb"), 2250.2, 0.1);
  // GB200: 152 x 8192 x 2.008 GHz = 2500.3 (GB200 NVL72 sheet: 2,500 dense per GPU at 1,200 W)
  EXPECT_NEAR(peak_fp16("gb200-186gb"), 2500.3, 0.1);
  // Blackwell Ultra keeps its twin's 16-bit and FP8 peaks: B300 148 x 8192 x 1.856 = 2250.2
  // (HGX B300: 2,250 dense), GB300 152 x 8192 x 2.008 = 2500.3 (GB300 NVL72: 2,500 per GPU).
  EXPECT_NEAR(peak_fp16("b300-288gb"), 2250.2, 0.1);
  EXPECT_NEAR(peak_fp16("gb300-288gb"), 2500.3, 0.1);
}

TEST(HwdbPresets, OtherPrecisionsMatchTheDatasheets) {
  GpuPeaks a = gpu_peaks_TFLOPS(*gpu_preset("a100-80gb"));
  EXPECT_NEAR(a.bf16_tc, 311.9, 0.05);
  EXPECT_NEAR(a.tf32_tc, 155.9, 0.05);  // 108 x 1024 x 1.41
  EXPECT_NEAR(a.fp32, 19.5, 0.05);      // 108 x 128 x 1.41 = 19.49
  GpuPeaks h = gpu_peaks_TFLOPS(*gpu_preset("h100-80gb"));
  EXPECT_NEAR(h.tf32_tc, 494.7, 0.05);  // 132 x 2048 x 1.83
  EXPECT_NEAR(h.fp32, 66.9, 0.05);      // 132 x 256 x 1.98 = 66.9 (datasheet 67)
  GpuPeaks b = gpu_peaks_TFLOPS(*gpu_preset("b200-180gb"));
  EXPECT_NEAR(b.fp8_tc, 4500.4, 0.1);   // 148 x 16384 x 1.856 (sheet 4,500)
  EXPECT_NEAR(b.tf32_tc, 1125.1, 0.1);  // 148 x 4096 x 1.856 (sheet 1,100)
  EXPECT_NEAR(b.fp32, 74.4, 0.05);      // 148 x 256 x 1.965 = 74.45 (sheet 75)
  GpuPeaks gb = gpu_peaks_TFLOPS(*gpu_preset("gb200-186gb"));
  EXPECT_NEAR(gb.fp8_tc, 5000.6, 0.1);   // 152 x 16384 x 2.008 (sheet 5,000)
  EXPECT_NEAR(gb.tf32_tc, 1250.2, 0.1);  // 152 x 4096 x 2.008 (sheet 1,250)
  EXPECT_NEAR(gb.fp32, 80.0, 0.05);      // 152 x 256 x 2.056 = 80.00 (sheet 80)
  GpuPeaks b3 = gpu_peaks_TFLOPS(*gpu_preset("b300-288gb"));
  EXPECT_NEAR(b3.fp8_tc, 4500.4, 0.1);  // 148 x 16384 x 1.856 (sheet 4,500)
  EXPECT_NEAR(b3.fp32, 77.0, 0.05);     // 148 x 256 x 2.032 = 76.99 (sheet 75)
  GpuPeaks gb3 = gpu_peaks_TFLOPS(*gpu_preset("gb300-288gb"));
  EXPECT_NEAR(gb3.fp8_tc, 5000.6, 0.1);  // 152 x 16384 x 2.008 (sheet 5,000)
  // Dense NVFP4: 4x bf16 per clock on Blackwell, 6x on Blackwell Ultra (session 47).
  EXPECT_NEAR(b.fp4_tc, 9001.0, 0.1);     // 148 x 32768 x 1.856 (sheet 9,000)
  EXPECT_NEAR(gb.fp4_tc, 10001.3, 0.1);   // 152 x 32768 x 2.008 (NVL72 720 PF / 72 = 10,000)
  EXPECT_NEAR(b3.fp4_tc, 13501.5, 0.1);   // 148 x 49152 x 1.856 (HGX B300 108 PF / 8 = 13,500)
  EXPECT_NEAR(gb3.fp4_tc, 15002.0, 0.1);  // 152 x 49152 x 2.008 (NVL72 about 1,100 PF / 72)
  EXPECT_EQ(h.fp4_tc, 0.0);               // Hopper has no FP4 tensor cores
  GpuPeaks v = gpu_peaks_TFLOPS(*gpu_preset("v100-32gb"));
  EXPECT_EQ(v.bf16_tc, 0.0);  // Volta has no bf16 or tf32 tensor cores
  EXPECT_EQ(v.tf32_tc, 0.0);
  EXPECT_NEAR(v.fp32, 15.7, 0.05);  // 80 x 128 x 1.53 = 15.67
}

TEST(HwdbPresets, MemoryIsTheNvidiaSmiTotal) {
  // nvidia-smi totals in MiB; memory_GiB stores MiB / 1024.
  EXPECT_DOUBLE_EQ(in_MiB(gpu_preset("v100-16gb")->memory), 16160);
  EXPECT_DOUBLE_EQ(in_MiB(gpu_preset("v100-32gb")->memory), 32510);
  EXPECT_DOUBLE_EQ(in_MiB(gpu_preset("a100-40gb")->memory), 40960);
  EXPECT_DOUBLE_EQ(in_MiB(gpu_preset("a100-80gb")->memory), 81920);
  EXPECT_DOUBLE_EQ(in_MiB(gpu_preset("h100-80gb")->memory), 81559);
  EXPECT_DOUBLE_EQ(in_MiB(gpu_preset("h200-141gb")->memory), 143771);
  EXPECT_DOUBLE_EQ(in_MiB(gpu_preset("b200-180gb")->memory), 183359);
  EXPECT_DOUBLE_EQ(in_MiB(gpu_preset("gb200-186gb")->memory), 189471);
  EXPECT_DOUBLE_EQ(in_MiB(gpu_preset("b300-288gb")->memory), 275040);
  // GB300: no nvidia-smi total found; 283,189 MiB derived (hwdb/data/gpus/gb300-288gb.json).
  EXPECT_DOUBLE_EQ(in_MiB(gpu_preset("gb300-288gb")->memory), 283189);
}

TEST(HwdbPresets, EveryPresetLoadsAndIsNamedAfterItsFile) {
  std::vector<std::string> gpus = gpu_preset_names(), systems = system_preset_names();
  EXPECT_EQ(gpus.size(), 14u);
  EXPECT_EQ(systems.size(), 13u);
  for (const auto& n : gpus) {
    auto g = gpu_preset(n);
    ASSERT_TRUE(g.ok()) << n << ": " << g.errors()[0].to_string();
    EXPECT_EQ(g->name, n);
  }
  for (const auto& n : systems) {
    auto s = system_preset(n);
    ASSERT_TRUE(s.ok()) << n << ": " << s.errors()[0].to_string();
    EXPECT_EQ(s->name, n);
  }
}

TEST(HwdbPresets, EveryPresetFileCitesASource) {
  std::vector<std::string> names = gpu_preset_names(), systems = system_preset_names();
  names.insert(names.end(), systems.begin(), systems.end());
  EXPECT_EQ(names.size(), hardware_preset_files().size());  // no file outside gpus/ and systems/
  // The researched reference, or (the export parts A800/H800, which it does not cover) the
  // NVIDIA datasheet the figures come from.
  for (const auto& n : names) {
    const std::string src = hardware_preset_source(n);
    EXPECT_TRUE(src.find("hardware-and-comm.md") != std::string::npos ||
                src.find("datasheet") != std::string::npos)
        << n;
  }
  EXPECT_EQ(hardware_preset_source("not-a-preset"), "");
}

TEST(HwdbPresets, SystemsMatchTheNodeTable) {
  auto a = system_preset("dgx-a100");
  EXPECT_EQ(a->gpu.name, "a100-80gb");
  EXPECT_EQ(a->gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(in_GBps(a->intra_bw_per_gpu), 300);  // 600 GB/s bidirectional / 2
  EXPECT_DOUBLE_EQ(a->nic_bw.v * 8 / 1e9, 200);          // HDR
  auto h = system_preset("dgx-h100");
  EXPECT_TRUE(h->nvls);
  EXPECT_DOUBLE_EQ(in_GBps(h->intra_bw_per_gpu), 450);
  EXPECT_DOUBLE_EQ(h->nics_per_node * h->nic_bw.v * 8 / 1e9, 3200);  // 8 x NDR 400
  auto d1 = system_preset("dgx1-v100");
  EXPECT_EQ(d1->topology, IntraTopology::nvlink_mesh);
  EXPECT_EQ(d1->nics_per_node, 4);
  auto d2 = system_preset("dgx2");
  EXPECT_EQ(d2->gpus_per_node, 16);
  EXPECT_EQ(d2->gpu.name, "v100-32gb");
  auto p = system_preset("polaris");
  EXPECT_EQ(p->gpus_per_node, 4);
  EXPECT_EQ(p->gpu.name, "a100-40gb");
  EXPECT_EQ(p->nics_per_node, 2);
  EXPECT_DOUBLE_EQ(in_GiB(p->host_memory), 512);
  EXPECT_EQ(p->cpu_cores, 32);
  EXPECT_FALSE(system_preset("dgx-h200")->gpu.name.empty());
  EXPECT_EQ(system_preset("dgx-h200")->gpu.name, "h200-141gb");
  auto b = system_preset("dgx-b200");
  EXPECT_EQ(b->gpu.name, "b200-180gb");
  EXPECT_TRUE(b->nvls);                                              // NVSwitch gen4 has NVLink SHARP
  EXPECT_DOUBLE_EQ(in_GBps(b->intra_bw_per_gpu), 900);               // 18 NVLink 5 links x 50 GB/s
  EXPECT_DOUBLE_EQ(b->nics_per_node * b->nic_bw.v * 8 / 1e9, 3200);  // 8 x NDR 400
  // GB200 NVL72: the rack is the node (its NVLink domain), one 400 Gb/s port per GPU, and
  // the host is 36 Grace CPUs: 36 x 72 cores, 36 x 480 GB LPDDR5X at 36 x 512 GB/s.
  auto r = system_preset("gb200-nvl72");
  EXPECT_EQ(r->gpu.name, "gb200-186gb");
  EXPECT_EQ(r->gpus_per_node, 72);
  EXPECT_TRUE(r->nvls);
  EXPECT_DOUBLE_EQ(in_GBps(r->intra_bw_per_gpu), 900);
  EXPECT_DOUBLE_EQ(r->nics_per_node * r->nic_bw.v * 8 / 1e9, 28800);  // 72 x 400
  EXPECT_EQ(r->cpu_cores, 2592);
  EXPECT_NEAR(r->host_memory.v / 1e9, 17280, 0.5);
  EXPECT_DOUBLE_EQ(in_GBps(r->host_mem_bw), 18432);
  // DGX B300 and GB300 NVL72: NVLink 5 as before, one 800 Gb/s ConnectX-8 per GPU.
  auto b3 = system_preset("dgx-b300");
  EXPECT_EQ(b3->gpu.name, "b300-288gb");
  EXPECT_TRUE(b3->nvls);
  EXPECT_DOUBLE_EQ(b3->nics_per_node * b3->nic_bw.v * 8 / 1e9, 6400);  // 8 x XDR 800
  auto r3 = system_preset("gb300-nvl72");
  EXPECT_EQ(r3->gpu.name, "gb300-288gb");
  EXPECT_EQ(r3->gpus_per_node, 72);
  EXPECT_EQ(r3->gpus_per_host, 4);
  EXPECT_DOUBLE_EQ(r3->nics_per_node * r3->nic_bw.v * 8 / 1e9, 57600);  // 72 x 800
}

TEST(HwdbPresets, PcieCardsHaveNoNvlink) {
  for (const char* n : {"v100-pcie-16gb", "a100-pcie-40gb", "a100-pcie-80gb", "h100-pcie-80gb"})
    EXPECT_EQ(gpu_preset(n)->nvlink_links, 0) << n;
}

TEST(HwdbPresets, UnknownPresetSuggestsTheNearestName) {
  auto g = gpu_preset("a100-80g");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.errors()[0].message, "unknown GPU preset \"a100-80g\"");
  EXPECT_NE(g.errors()[0].hint.find("did you mean \"a100-80gb\""), std::string::npos);
  auto s = system_preset("dgx-h10");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.errors()[0].hint.find("did you mean \"dgx-h100\""), std::string::npos);
}

}  // namespace
}  // namespace dsplan
