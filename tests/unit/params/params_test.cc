// Exact parameter counts (estimator/params.h) against Hugging Face's GPT-2 small, and the
// vocabulary padded to a multiple of 128 x TP as Megatron pads it. Arithmetic in comments.
#include "estimator/params.h"

#include <gtest/gtest.h>

namespace dsplan {

TEST(Params, Gpt2SmallMatchesHuggingFace) {
  ModelSpec m;
  m.layers = 12; m.hidden = 768; m.heads = 12; m.kv_heads = 12; m.ffn_hidden = 3072;
  m.vocab = 50257; m.max_positions = 1024;
  // wte 50257*768 = 38,597,376; wpe 1024*768 = 786,432;
  // layer: 2 LN (4*768 = 3,072) + c_attn (768*2304+2304 = 1,771,776) + c_proj (589,824+768
  // = 590,592) + c_fc (768*3072+3072 = 2,362,368) + mlp proj (2,359,296+768 = 2,360,064)
  // = 7,087,872; x12 = 85,054,464; ln_f 1,536. Sum = 124,439,808.
  EXPECT_EQ(total_params(m), 124439808);
}

TEST(Params, PaddedVocabRoundsToMultipleTimesTp) {
  ModelSpec m;
  m.vocab = 50257; m.vocab_pad_multiple = 128;
  EXPECT_EQ(padded_vocab(m, 1), 50304);  // ceil(50257/128)*128 = 393*128
  EXPECT_EQ(padded_vocab(m, 2), 50432);  // ceil(50257/256)*256 = 197*256
}

}  // namespace dsplan
