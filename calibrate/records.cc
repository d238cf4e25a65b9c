// Names of the calibration enums: GEMM dtypes, bandwidth kinds, collectives, scopes.
#include "calibrate/records.h"

namespace dsplan {

const std::vector<std::string>& gemm_dtype_names() {
  static const std::vector<std::string> v{"bf16", "fp16", "tf32", "fp32"};
  return v;
}
const std::vector<std::string>& bandwidth_kind_names() {
  static const std::vector<std::string> v{"hbm_copy", "hbm_triad", "pcie_h2d", "pcie_d2h"};
  return v;
}
const std::vector<std::string>& collective_names() {
  static const std::vector<std::string> v{"all_reduce", "reduce_scatter", "all_gather",
                                          "broadcast", "send_recv"};
  return v;
}
const std::vector<std::string>& comm_scope_names() {
  static const std::vector<std::string> v{"intra_node", "inter_node"};
  return v;
}

const char* name(GemmDtype d) { return gemm_dtype_names()[static_cast<size_t>(d)].c_str(); }
const char* name(BandwidthKind k) { return bandwidth_kind_names()[static_cast<size_t>(k)].c_str(); }
const char* name(Collective c) { return collective_names()[static_cast<size_t>(c)].c_str(); }
const char* name(CommScope s) { return comm_scope_names()[static_cast<size_t>(s)].c_str(); }

}  // namespace dsplan
