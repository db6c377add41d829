// Sums over a layer part's work that several workload tests compare with hand figures.
#pragma once

#include <string>

#include "workloads/layers/layer_work.hpp"

namespace stepsim::test {

// Bytes per token of the part's memory-bound ops named `name`, for one sequence.
inline double memory_bytes(const Plan& p, int64_t layer, LayerPart part, const std::string& name) {
  const LayerWork w = layer_work(p, layer, 1.0, 0);
  double sum = 0;
  for (const MemoryOp& op : w.part(part).memory)
    if (op.name == name) sum += op.bytes_per_token;
  return sum;
}

}  // namespace stepsim::test
