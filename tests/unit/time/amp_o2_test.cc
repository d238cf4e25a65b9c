// DDP over a model cast to 16 bits (apex AMP opt_level O2, TrainConfig::ddp_amp_o2): no
// autocast, so a layer costs what any 16-bit model's does; 16-bit gradients are reduced; the
// optimizer keeps and updates fp32 master weights.
#include <gtest/gtest.h>

#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/operators.h"
#include "estimator/time/optimizer.h"
#include "estimator/time/parallel_comm.h"
#include "fixtures.h"

namespace dsplan {
namespace {

OpKey bert_key(Framework f) {
  OpKey k;
  k.seq_len = 128;
  k.micro_batch = 64;
  k.precision = Precision::fp16;
  k.framework = f;
  return k;
}

// BERT-large's shape (24 x 1024, 16 heads, 128 tokens, micro-batch 64) on an A100: under
// autocast the layer also casts its weights and runs its elementwise passes in fp32; a 16-bit
// model does neither, and its layer costs exactly what DeepSpeed's fp16 module's does (the
// same model code, the same 16-bit kernels).
TEST(AmpO2, ASixteenBitModelRunsNoAutocast) {
  const ModelSpec m = test::gpt("bert-large-shape", 24, 1024, 16, 128, 30528, 8);
  const GpuSpec gpu = test::a100();
  const Efficiency eff = default_efficiency(gpu);
  const OpCosts autocast = operator_costs(m, gpu, eff, bert_key(Framework::ddp));
  OpKey o2_key = bert_key(Framework::ddp);
  o2_key.half_model = true;
  const OpCosts o2 = operator_costs(m, gpu, eff, o2_key);
  const OpCosts ds = operator_costs(m, gpu, eff, bert_key(Framework::deepspeed));
  EXPECT_DOUBLE_EQ(o2.fwd.v, ds.fwd.v);
  EXPECT_DOUBLE_EQ(o2.bwd.v, ds.bwd.v);
  EXPECT_DOUBLE_EQ(o2.head_fwd.v, ds.head_fwd.v);
  EXPECT_DOUBLE_EQ(o2.fwd_linear.v, autocast.fwd_linear.v);  // the same 16-bit GEMMs
  EXPECT_LT(o2.fwd.v, autocast.fwd.v);
  EXPECT_LT(o2.bwd.v, autocast.bwd.v);
}

// Gradients are the 16-bit model's (2 B) where autocast's are the fp32 parameters' (4 B). At
// the same gradient width the O2 step moves 4 B/param more: the master step's widening of the
// grads (read 2, write 4) and 16-bit copy of the weights (read 4, write 2), 12 B, against
// GradScaler's separate unscale pass (8 B), which apex folds into the widening copy.
TEST(AmpO2, SixteenBitGradientsAndFp32MasterWeights) {
  TrainConfig c;
  c.framework = Framework::ddp;
  c.precision = Precision::fp16;
  c.fused_optimizer = 1;
  EXPECT_DOUBLE_EQ(grad_element_bytes(c), 4.0);
  const double autocast = optimizer_bytes_per_param(c, 2.0);
  c.ddp_amp_o2 = true;
  EXPECT_FALSE(c.torch_autocast());
  EXPECT_DOUBLE_EQ(grad_element_bytes(c), 2.0);
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_param(c, 2.0), autocast + 4.0);
  c.precision = Precision::fp32;  // fp32 has no 16-bit model: 4-byte gradients either way
  EXPECT_DOUBLE_EQ(grad_element_bytes(c), 4.0);
}

// A pure 16-bit model (TrainConfig::pure16, DDP or FSDP): no master weights, so no master
// step, and the fused Adam update moves 16-bit parameters and states: 28 / 2 = 14 B/param, plus
// the gradient-norm read (2). DeepSpeed ignores the flag (it always keeps fp32 master weights).
TEST(AmpO2, PureSixteenBitUpdateMovesHalfTheBytes) {
  TrainConfig c;
  c.framework = Framework::ddp;
  c.precision = Precision::bf16;
  c.fused_optimizer = 1;
  c.pure16 = true;
  EXPECT_TRUE(c.pure16_model());
  EXPECT_FALSE(c.torch_autocast());
  EXPECT_DOUBLE_EQ(grad_element_bytes(c), 2.0);
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_param(c, 2.0), 14.0 + 2.0);
  c.framework = Framework::deepspeed;
  EXPECT_FALSE(c.pure16_model());
}

}  // namespace
}  // namespace dsplan
