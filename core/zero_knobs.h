// DeepSpeed's ZeRO knobs as a TrainConfig carries them (deepspeed/runtime/zero/config.py
// defaults, in elements), and the overlap rule Megatron shares.
#pragma once

namespace dsplan {

// DeepSpeed ZeRO knobs (deepspeed/runtime/zero/config.py defaults), in elements.
struct ZeroKnobs {
  double reduce_bucket_elems = 5e8;
  double allgather_bucket_elems = 5e8;
  double prefetch_bucket_elems = 5e7;
  double max_live_params = 1e9;
  double param_persistence_threshold = 1e5;
  // DeepSpeed turns overlap_comm on by default only for stage 3; -1 = that default. For
  // Megatron, 1 is Megatron-Core's --overlap-grad-reduce (and --overlap-param-gather with
  // the distributed optimizer); -1 and 0 reduce after the backward, as Megatron-LM 2021.
  int overlap_comm = -1;
  bool contiguous_gradients = true;
  bool overlap(int stage) const { return overlap_comm < 0 ? stage == 3 : overlap_comm == 1; }
  bool operator==(const ZeroKnobs&) const = default;
};

}  // namespace dsplan
