// Bucket planning of the last backward: pieces split at bucket boundaries, the partial
// bucket flushed at the end, per-layer buckets without byte counts, and the bucket cap.
#include "simulator/backward_tail.h"

#include <gtest/gtest.h>

namespace dsplan::sim {
namespace {

TEST(TailPieces, OneBucketPerLayerWhenSizesMatch) {
  const auto pieces = plan_tail_pieces(3, MB(100), MB(100));
  ASSERT_EQ(pieces.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(pieces[k].layer, k);
    EXPECT_DOUBLE_EQ(pieces[k].fraction, 1.0);
    EXPECT_TRUE(pieces[k].closes_bucket);
    EXPECT_DOUBLE_EQ(pieces[k].bucket_layers, 1.0);
  }
}

TEST(TailPieces, ABucketSpansLayersAndTheRemainderIsFlushed) {
  // 250 MB buckets over 100 MB layers: bucket 1 closes half-way through layer 2
  // (2.5 layers); the last 0.5 layer is flushed as a partial bucket.
  const auto pieces = plan_tail_pieces(3, MB(100), MB(250));
  ASSERT_EQ(pieces.size(), 4u);
  EXPECT_FALSE(pieces[0].closes_bucket);
  EXPECT_FALSE(pieces[1].closes_bucket);
  EXPECT_EQ(pieces[2].layer, 2);
  EXPECT_DOUBLE_EQ(pieces[2].fraction, 0.5);
  EXPECT_TRUE(pieces[2].closes_bucket);
  EXPECT_DOUBLE_EQ(pieces[2].bucket_layers, 2.5);
  EXPECT_EQ(pieces[3].layer, 2);
  EXPECT_NEAR(pieces[3].fraction, 0.5, 1e-12);
  EXPECT_TRUE(pieces[3].closes_bucket);
  EXPECT_NEAR(pieces[3].bucket_layers, 0.5, 1e-12);
}

TEST(TailPieces, LayersLargerThanABucketAreSplit) {
  // 100 MB layers, 25 MB buckets: four pieces of a quarter layer per layer.
  const auto pieces = plan_tail_pieces(2, MB(100), MB(25));
  ASSERT_EQ(pieces.size(), 8u);
  for (const TailPiece& p : pieces) {
    EXPECT_NEAR(p.fraction, 0.25, 1e-12);
    EXPECT_TRUE(p.closes_bucket);
  }
}

TEST(TailPieces, NoByteCountsMeansOneBucketPerLayer) {
  EXPECT_EQ(plan_tail_pieces(4, Bytes{}, MB(25)).size(), 4u);
  EXPECT_EQ(plan_tail_pieces(4, MB(10), Bytes{}).size(), 4u);
}

TEST(TailPieces, BucketCountIsCapped) {
  // 1-byte buckets would make 1e8 buckets per 100 MB layer; the cap keeps it at
  // kMaxBucketsPerChunk for the whole chunk.
  const auto pieces = plan_tail_pieces(2, MB(100), bytes(1));
  int buckets = 0;
  for (const TailPiece& p : pieces) buckets += p.closes_bucket ? 1 : 0;
  EXPECT_EQ(buckets, kMaxBucketsPerChunk);
}

}  // namespace
}  // namespace dsplan::sim
