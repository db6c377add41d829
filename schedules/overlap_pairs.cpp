#include "schedules/overlap_pairs.hpp"

namespace stepsim::sched {

std::vector<ChunkOp> pair_backward_with_next_forward(const std::vector<ChunkOp>& ops) {
  std::vector<ChunkOp> out;
  out.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const ChunkOp& op = ops[i];
    if (op.pass == Pass::B && i + 1 < ops.size() && ops[i + 1].pass == Pass::F) {
      ChunkOp pair;
      pair.pass = Pass::FB;
      pair.zero_bubble = op.zero_bubble;
      pair.fwd = ops[i + 1].fwd;
      pair.bwd = op.bwd;
      out.push_back(pair);
      ++i;
      continue;
    }
    out.push_back(op);
  }
  return out;
}

}  // namespace stepsim::sched
