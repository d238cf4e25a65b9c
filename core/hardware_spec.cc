// Peak throughputs derived from the per-SM datasheet figures (hardware-and-comm.md §1):
// peak = SMs x FLOP/clk/SM x clock. Tensor-core peaks use the tensor clock, vector
// peaks the boost clock.
#include "core/hardware_spec.h"

namespace dsplan {

FlopsPerSecond GpuSpec::matmul_peak(Precision p) const {
  double per_clk = 0;
  switch (p) {
    case Precision::fp16: per_clk = fp16_tc_flop_per_clk_sm; break;
    case Precision::bf16: per_clk = bf16_tc_flop_per_clk_sm > 0 ? bf16_tc_flop_per_clk_sm
                                                                : fp32_flop_per_clk_sm; break;
    case Precision::fp8:
      per_clk = fp8_tc_flop_per_clk_sm;
      break;
    case Precision::nvfp4:
      per_clk = fp4_tc_flop_per_clk_sm;
      break;
    case Precision::tf32:  // no TF32 tensor cores (Volta): the fp32 pipe
      if (!(tf32_tc_flop_per_clk_sm > 0)) return vector_peak();
      per_clk = tf32_tc_flop_per_clk_sm;
      break;
    case Precision::fp32: return vector_peak();
  }
  return FlopsPerSecond(sm_count * per_clk * tensor_clock_MHz * 1e6);
}

FlopsPerSecond GpuSpec::vector_peak() const {
  return FlopsPerSecond(sm_count * fp32_flop_per_clk_sm * boost_clock_MHz * 1e6);
}

}  // namespace dsplan
