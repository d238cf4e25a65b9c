// Which GEMM dimensions of a model are not multiples of 8 elements, the alignment 16-bit
// tensor cores want (docs/model.md §4.1, "Alignment"), at the tensor-parallel degrees a
// search covers, said as advice: the head dimension (the per-head attention products), the
// per-GPU vocabulary shard (the logits) and the per-GPU widths of the layer's linears
// (QKV output, attention output, MLP). What such a GEMM costs is estimate_gemm's
// (misaligned_rate). fp32 has no alignment requirement, so it gets no advice.
#pragma once

#include <string>
#include <vector>

#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/train_config.h"

namespace dsplan {

// One sentence per misalignment; empty when every dimension is aligned at every TP in `tps`.
std::vector<std::string> alignment_advice(const ModelSpec& m, const std::vector<int>& tps, Precision p,
                                          const GpuSpec& gpu);

}  // namespace dsplan
