// Alignment advice (estimator/time/alignment.h): the misaligned GEMM dimensions of a model
// at the TP degrees searched, worked out by hand below.
#include "estimator/time/alignment.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace dsplan {
namespace {

bool any_has(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x.find(s) != std::string::npos) return true;
  return false;
}

// BigScience's tr8b-104B: 64 x 11600, 80 heads, vocabulary 50257 padded to 128 x TP.
//  - head dimension 11600 / 80 = 145 (145 = 8 x 18 + 1): misaligned at every TP;
//  - TP 1: QKV 34800, attention output 11600, MLP 46400 (all 8 x k);
//    TP 2: 17400, 5800, 23200 (8 x 2175, 8 x 725, 8 x 2900);
//    TP 4: 8700 = 8 x 1087 + 4, 2900 = 8 x 362 + 4: misaligned;
//    TP 8: 4350 = 8 x 543 + 6: misaligned (80 heads / 8 = 10 per GPU);
//  - vocabulary at TP 4: 50257 rounded up to 512 = 50688, 12672 per GPU = 8 x 1584.
// On V100 a plain misaligned GEMM keeps 0.5 of the tensor rate, a misaligned attention GEMM
// the fp32 pipe's 15.667 / 125.3 = 0.125 ("0.12" at two significant digits).
TEST(Alignment, BigScience104bOnV100) {
  ModelSpec m = test::gpt("104b", 64, 11600, 80, 2048, 50257, 128);
  const auto advice = alignment_advice(m, {1, 2, 4, 8}, Precision::fp16, test::v100());
  ASSERT_EQ(advice.size(), 2u);
  EXPECT_TRUE(any_has(advice, "head dimension 145"));
  EXPECT_TRUE(any_has(advice, "0.12 of the tensor rate (the fp32 FMA pipe)"));
  EXPECT_TRUE(any_has(advice, "at TP 4, 8 the per-GPU widths"));
  EXPECT_TRUE(any_has(advice, "QKV 8700, attention output 2900, MLP 11600"));
  EXPECT_TRUE(any_has(advice, "TP 1, 2 keep them aligned"));
  EXPECT_FALSE(any_has(advice, "vocabulary"));
}

// Hugging Face GPT-2 keeps its vocabulary of 50257 unpadded (8 x 6282 + 1): the logits are
// misaligned at every TP; 768 / 12 = 64 and 768 x 3 / t, 768 / t, 3072 / t stay multiples of
// 8 for t = 1, 2, 4. On Hopper a misaligned GEMM keeps 0.2 of the rate.
TEST(Alignment, UnpaddedVocabularyOnHopper) {
  ModelSpec m = test::gpt("gpt2", 12, 768, 12, 1024, 50257, 1);
  const auto advice = alignment_advice(m, {1, 2, 4}, Precision::bf16, test::h200());
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_TRUE(any_has(advice, "vocabulary 50257 is not a multiple of 8 per GPU at TP 1, 2, 4"));
  EXPECT_TRUE(any_has(advice, "0.2 of the tensor rate"));
  // Padded to 128 x TP (Megatron's rule) nothing is left to say; fp32 never needs alignment.
  m.vocab_pad_multiple = 128;
  EXPECT_TRUE(alignment_advice(m, {1, 2, 4}, Precision::bf16, test::h200()).empty());
  m.vocab_pad_multiple = 1;
  EXPECT_TRUE(alignment_advice(m, {1, 2, 4}, Precision::fp32, test::h200()).empty());
}

}  // namespace
}  // namespace dsplan
