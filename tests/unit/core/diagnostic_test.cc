// Diagnostics as data (core/diagnostic.h): the edit distance behind "did you mean", which
// typos earn a suggestion, the one-line form naming file, JSON path, message and hint, and
// terminal control characters escaped before printing.
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

// Text echoed to a terminal: ESC (0x1b), a C1 CSI (U+009B, bytes c2 9b), RIGHT-TO-LEFT
// OVERRIDE (U+202E, e2 80 ae) and LINE SEPARATOR (U+2028, e2 80 a8) are escaped; plain
// ASCII and other UTF-8 (the 3-byte U+00E9 "é" is c3 a9, 2 bytes) are kept.
TEST(Diagnostic, PrintableEscapesTerminalControls) {
  EXPECT_EQ(printable("gpt2\x1b[31m"), "gpt2\\x1b[31m");
  EXPECT_EQ(printable("a\xc2\x9b"
                      "b"),
            "a\\x9bb");
  EXPECT_EQ(printable("x\xe2\x80\xaey"), "x\\u202ey");
  EXPECT_EQ(printable("x\xe2\x80\xa8"), "x\\u2028");
  EXPECT_EQ(printable("caf\xc3\xa9 ok"), "caf\xc3\xa9 ok");
  EXPECT_EQ(first_unprintable("caf\xc3\xa9"), std::string::npos);
  EXPECT_EQ(first_unprintable("ab\x7f"), 2u);
  EXPECT_EQ(first_unprintable("ab\xe2\x81\xa6"), 2u);  // U+2066, an isolate
}

}  // namespace dsplan
