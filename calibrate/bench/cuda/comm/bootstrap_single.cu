// Bootstrap without MPI: this process drives every visible GPU through one intra-node
// communicator (no inter-node scope can be measured).
#include "calibrate/bench/cuda/comm/comm.h"

namespace dsplan::cuda {

CommWorld open_comm_world(int visible_devices) {
  CommWorld w;
  w.gpu_count = visible_devices;
  if (visible_devices >= 2) {
    std::vector<int> devs;
    for (int d = 0; d < visible_devices; ++d) devs.push_back(d);
    w.groups.push_back(open_local_group(devs));
  }
  w.shutdown = [] {};
  return w;
}

}  // namespace dsplan::cuda
