// Memo-table hashing (estimator/time/step_caches.h, memo_cache.h): operator keys are packed
// into one word, so distinct keys within the packed ranges never share a hash, and the
// finished hash spreads them over the slots.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "estimator/time/efficiency_defaults.h"
#include "estimator/time/step_caches.h"
#include "fixtures.h"

namespace dsplan {
namespace {

std::vector<OpKey> op_keys() {
  std::vector<OpKey> keys;
  for (int tp : {1, 2, 4, 8, 16, 64})
    for (int mb : {1, 2, 3, 4, 8, 16, 64, 256})
      for (int seq : {128, 512, 1024, 2048, 8192})
        for (bool sp : {false, true})
          for (bool flash : {false, true})
            for (auto ck : {Checkpointing::none, Checkpointing::selective, Checkpointing::full,
                            Checkpointing::block})
              for (auto p : {Precision::fp32, Precision::fp16, Precision::bf16})
                for (auto fw : {Framework::deepspeed, Framework::megatron, Framework::fsdp, Framework::ddp}) {
                  OpKey k;
                  k.tp = tp, k.micro_batch = mb, k.seq_len = seq, k.sequence_parallel = sp, k.flash = flash;
                  k.ckpt = ck, k.precision = p, k.framework = fw;
                  keys.push_back(k);
                }
  return keys;
}

// 6 x 8 x 5 x 2 x 2 x 4 x 3 x 4 = 46,080 distinct keys, 46,080 distinct hashes.
TEST(Memo, DistinctOperatorKeysHaveDistinctHashes) {
  const std::vector<OpKey> keys = op_keys();
  ASSERT_EQ(keys.size(), 46080u);
  std::set<std::uint64_t> hashes;
  for (const OpKey& k : keys) hashes.insert(hash_of(k));
  EXPECT_EQ(hashes.size(), keys.size());
}

// 400 keys (a search's worth) over 4,096 slots: uniform hashing leaves about
// 400 x 399 / (2 x 4096) = 19.5 colliding pairs, so 380 or more distinct slots; packed keys
// that only differ in high fields must not pile up in a few slots.
TEST(Memo, FinishedHashesSpreadOverTheSlots) {
  const std::vector<OpKey> keys = op_keys();
  std::set<std::uint64_t> slots;
  for (std::size_t i = 0; i < 400; ++i) slots.insert(hash_finish(hash_of(keys[i * 97 % keys.size()])) & 4095);
  EXPECT_GE(slots.size(), 360u);
}

// What a search computes (docs/benchmarks.md, "Session 21"): a layer's operators once per
// layout whatever the checkpointing (op_bases), each checkpointing mode derived from them
// (ops), and without a pipeline one communication entry per parallel layout whatever the
// micro-batch. Over tp {1, 2} x micro-batch {1, 2, 4, 8} x checkpointing {none, selective,
// full} x ZeRO {0, 1} at pp 1 (48 points):
//   op_bases: 2 tp x 4 micro-batches = 8;  ops: 8 x 3 modes = 24;  comm: 2 tp x 2 stages = 4.
// At pp 2 the micro-batch is back in the communication key (the activation sends):
// 2 tp x 2 stages x 4 micro-batches = 16 entries, and the same operator work. (Each pass
// starts from empty tables and visits each operator key's points together, so a
// direct-mapped slot shared by two operator keys cannot add misses; the four pp-1
// communication keys, revisited for every micro-batch, do not share a slot.)
TEST(Memo, OperatorsOncePerLayoutCommunicationOncePerMicroBatchWithoutPipeline) {
  const ModelSpec m = test::gpt("gpt-1.3b", 24, 2048, 32, 2048, 51200, 128);
  const Cluster cl = test::cluster(test::dgx_a100(), 16);
  const Efficiency eff = default_efficiency(cl.node.gpu);
  for (int pp : {1, 2}) {
    StepTimeModel::Caches c(cl, eff);
    for (int tp : {1, 2})
      for (int mb : {1, 2, 4, 8})
        for (auto ck : {Checkpointing::none, Checkpointing::selective, Checkpointing::full})
          for (int zero : {0, 1}) {
            TrainConfig cfg;
            cfg.framework = Framework::megatron;
            cfg.precision = Precision::bf16;
            cfg.seq_len = 2048;
            cfg.tp = tp, cfg.pp = pp, cfg.dp = 16 / (tp * pp), cfg.micro_batch = mb;
            cfg.checkpointing = ck, cfg.zero_stage = zero;
            op_entry(c, m, cl, eff, cfg);
            comm_entry(c, m, cl, eff, cfg);
          }
    EXPECT_EQ(c.op_bases.misses(), 8u) << "pp " << pp;
    EXPECT_EQ(c.ops.misses(), 24u) << "pp " << pp;
    EXPECT_EQ(c.comm.misses(), pp == 1 ? 4u : 16u) << "pp " << pp;
  }
}

}  // namespace
}  // namespace dsplan
