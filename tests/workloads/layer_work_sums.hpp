// Sums over a layer part's work that several workload tests compare with hand figures.
#pragma once

#include <string>
#include <string_view>

#include "workloads/layers/layer_work.hpp"

namespace stepsim::test {

// Bytes per token of a part's memory-bound ops named `name`.
inline double memory_bytes(const PartWork& part, const std::string& name) {
  double sum = 0;
  for (const MemoryOp& op : part.memory)
    if (op.name == name) sum += op.bytes_per_token;
  return sum;
}

// A part's memory-bound op named `name`, or nullptr.
inline const MemoryOp* memory_op(const PartWork& part, std::string_view name) {
  for (const MemoryOp& op : part.memory)
    if (op.name == name) return &op;
  return nullptr;
}

// The same for a layer's part, for one sequence.
inline double memory_bytes(const Plan& p, int64_t layer, LayerPart part, const std::string& name) {
  return memory_bytes(layer_work(p, layer, 1.0, 0).part(part), name);
}

}  // namespace stepsim::test
