// GPUs, nodes and clusters as datasheets describe them. All rates are per direction and
// dense (no sparsity). Peaks are derived as SMs x FLOP/clock/SM x clock so that a
// calibration can substitute a measured clock or an achieved fraction.
#pragma once

#include <cstdint>
#include <string>

#include "core/train_config.h"
#include "core/units.h"

namespace dsplan {

enum class GpuArch : std::uint8_t { volta, ampere, hopper, blackwell };

// Hopper and Blackwell share what the model prices per architecture beyond their datasheet
// numbers: TMA/asynchronous tensor-core kernels (stream-K GEMMs, sm75-era fallbacks for
// misaligned operands), FP8 tensor cores, NVLink SHARP switches and cuDNN fused attention
// under Transformer Engine (docs/model.md §2 "B200").
constexpr bool hopper_or_newer(GpuArch a) { return a >= GpuArch::hopper; }

struct GpuSpec {
  std::string name;  // e.g. "a100-80gb"
  GpuArch arch = GpuArch::ampere;
  Bytes memory;                 // HBM capacity as nvidia-smi reports total
  BytesPerSecond hbm_bw;        // datasheet HBM bandwidth
  int sm_count = 0;
  double tensor_clock_MHz = 0;  // clock used for tensor-core peaks
  double boost_clock_MHz = 0;   // clock used for FP32/FP64 peaks
  // Dense FLOP per clock per SM (0 = unsupported, e.g. bf16 on Volta).
  double fp16_tc_flop_per_clk_sm = 0;
  double bf16_tc_flop_per_clk_sm = 0;
  double tf32_tc_flop_per_clk_sm = 0;
  double fp8_tc_flop_per_clk_sm = 0;  // E4M3/E5M2 operands (Hopper and later)
  double fp4_tc_flop_per_clk_sm = 0;  // block-scaled E2M1 (NVFP4) operands (Blackwell)
  double fp32_flop_per_clk_sm = 0;
  Bytes l2;
  int nvlink_links = 0;               // 0 = no NVLink (PCIe card)
  BytesPerSecond nvlink_bw_per_link;  // line rate per link per direction
  int pcie_gen = 3;
  BytesPerSecond pcie_bw;             // x16 line rate per direction
  double tdp_W = 0;

  // Dense peak for GEMMs in this precision (tensor cores when available; fp32 uses
  // the fp32 vector pipe, as PyTorch does unless TF32 is allowed).
  FlopsPerSecond matmul_peak(Precision p) const;
  // Peak for elementwise/vector work (fp32 pipe).
  FlopsPerSecond vector_peak() const;
};

enum class IntraTopology : std::uint8_t { nvswitch, nvlink_mesh, pcie };

struct SystemSpec {
  std::string name;  // e.g. "dgx-a100"
  GpuSpec gpu;
  int gpus_per_node = 8;
  IntraTopology topology = IntraTopology::nvswitch;
  BytesPerSecond intra_bw_per_gpu;  // NVLink/NVSwitch (or PCIe) line rate per GPU per direction
  bool nvls = false;                // NVLink SHARP in-switch reduction (NVSwitch gen3)
  int nics_per_node = 0;
  BytesPerSecond nic_bw;            // per NIC per direction
  Bytes host_memory;
  BytesPerSecond host_mem_bw;
  int cpu_cores = 0;                // per node
  // GPUs under one operating system, which a launcher starts processes on (--num_gpus,
  // --nproc_per_node); 0 = the whole node. A GB200 NVL72 node (one NVLink domain) is 18
  // compute trays of 4 GPUs each.
  int gpus_per_host = 0;
  int launcher_gpus() const { return gpus_per_host > 0 ? gpus_per_host : gpus_per_node; }
};

// What the user runs on: `num_gpus` GPUs in nodes of `node.gpus_per_node`.
struct Cluster {
  SystemSpec node;
  int num_gpus = 1;
  int nodes() const {
    return (num_gpus + node.gpus_per_node - 1) / node.gpus_per_node;
  }
  int gpus_per_node() const { return num_gpus < node.gpus_per_node ? num_gpus : node.gpus_per_node; }
};

}  // namespace dsplan
