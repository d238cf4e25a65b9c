// Memo-table hashing (estimator/time/step_caches.h, memo_cache.h): operator keys are packed
// into one word, so distinct keys within the packed ranges never share a hash, and the
// finished hash spreads them over the slots.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "estimator/time/step_caches.h"

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

}  // namespace
}  // namespace dsplan
