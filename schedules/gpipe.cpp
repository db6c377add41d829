#include "schedules/gpipe.hpp"

namespace stepsim::sched {

std::vector<ChunkOp> GPipe::program(int64_t) const {
  std::vector<ChunkOp> ops;
  ops.reserve(size_t(2 * microbatches()));
  for (int32_t mb = 0; mb < int32_t(microbatches()); ++mb) ops.push_back({Pass::F, false, {mb, 0}, {}});
  for (int32_t mb = 0; mb < int32_t(microbatches()); ++mb) ops.push_back({Pass::B, false, {}, {mb, 0}});
  return ops;
}

}  // namespace stepsim::sched
