#include "core/diagnostic.h"

#include <gtest/gtest.h>

namespace dsplan {

TEST(Diagnostic, EditDistanceCountsInsertDeleteSubstitute) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);  // k->s, e->i, +g
  EXPECT_EQ(edit_distance("", "abc"), 3);
  EXPECT_EQ(edit_distance("same", "same"), 0);
}

TEST(Diagnostic, ClosestMatchSuggestsOnlyPlausibleTypos) {
  std::vector<std::string> keys{"hbm_GBps", "sm_count", "memory_GiB"};
  EXPECT_EQ(closest_match("hbm_GBs", keys).value_or(""), "hbm_GBps");
  EXPECT_FALSE(closest_match("completely_different", keys).has_value());
}

TEST(Diagnostic, ToStringNamesFilePathMessageAndHint) {
  Diagnostic d{"m.json", "/layers", "value -1 is out of range", "allowed: [1, 1000]"};
  EXPECT_EQ(d.to_string(), "m.json: /layers: value -1 is out of range (allowed: [1, 1000])");
}

}  // namespace dsplan
