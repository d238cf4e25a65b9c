// Writes the SYNTHETIC raw-records fixture (tests/data/calibrate/synthetic_a100_records.json)
// from the known parameters in synthetic.h: `make_synthetic_fixture OUT.json`. Not a
// measurement; see docs/calibration.md.
#include <fstream>
#include <iostream>

#include "calibrate/records.h"
#include "synthetic.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_synthetic_fixture OUT.json\n";
    return 2;
  }
  const auto recs = dsplan::testing::synthetic_records(dsplan::testing::Truth{}, 2024);
  std::ofstream out(argv[1]);
  out << dsplan::records_to_json(recs).dump(1) << "\n";
  return out ? 0 : 1;
}
