// A layer part's seconds with every kernel host-bound: the tests of unfused framework paths set the
// host's cost per kernel (kHost) far above any kernel's GPU time, so a part's kernels and bytes can be
// read apart: its non-memory seconds are kernels x kHost, its memory seconds bytes over HBM.
#pragma once

#include <string>
#include <vector>

#include "workloads/cost/part_cost.hpp"
#include "workloads/layers/layer_work.hpp"

namespace stepsim::host_bound {

inline constexpr double kHost = 0.01;  // 10 ms a kernel

// No GPU-side launch cost, no framework time beside the kernels, every kernel kHost on the host.
inline std::vector<std::string> sets() {
  return {"software.kernel_launch_s=0", "software.host_launch_s=0.01", "software.looped_launch_s=0.01",
          "software.moe_layer_host_s=0"};
}

struct PartTime {
  double kernels_s;  // the host's share it exposes plus the GPU's: kernels x kHost when host-bound
  double memory_s;
};

inline PartTime part_time(const Plan& p, LayerPart part, int64_t layer) {
  const cost::MicrobatchShape shape = cost::mean_microbatch_shape(p);
  const LayerWork w = layer_work(p, layer, p.sequences_per_microbatch(), shape.routed_rows);
  const cost::ClassSeconds s = cost::part_seconds(p, w.part(part), shape).all();
  return {s.launch + s.gemm + s.attention + s.memory, s.memory};
}

inline double hbm_bytes_per_s(const Plan& p) { return p.hardware.hbm_GBps * 1e9 * p.hardware.hbm_efficiency; }

}  // namespace stepsim::host_bound
