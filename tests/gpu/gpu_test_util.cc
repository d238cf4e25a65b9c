// One Bench per GPU test binary (NCCL communicators are opened once, in probe()).
#include "gpu_test_util.h"

namespace dsplan::gpu_test {

Bench& bench() {
  static std::unique_ptr<Bench> b = make_bench();
  return *b;
}

const Expected<DeviceInfo>& device() {
  static const Expected<DeviceInfo> d = bench().probe();
  return d;
}

}  // namespace dsplan::gpu_test
