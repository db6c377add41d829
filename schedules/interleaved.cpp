#include "schedules/interleaved.hpp"

#include <algorithm>
#include <string>

namespace stepsim::sched {

void Interleaved::check_shape(const ScheduleShape& shape) const {
  if (shape.virtual_stages == 1)
    throw ScheduleError("parallel.virtual_stages",
                        "schedule interleaved needs at least 2 virtual stages (chunks) per rank; set "
                        "parallel.virtual_stages=2 or more, or use schedule=1f1b");
  if (shape.virtual_stages > 64)
    throw ScheduleError("parallel.virtual_stages", "at most 64 virtual stages per rank are modelled; lower it");
  if (shape.ranks < 1) throw ScheduleError("parallel.pp", "interleaved needs at least one pipeline rank");
  // A smaller last group would make the order wait on itself (rank r's warm-up outruns the group).
  if (shape.microbatches % shape.ranks != 0)
    throw ScheduleError("parallel.microbatches",
                        "schedule interleaved runs microbatches in groups of parallel.pp = " +
                            std::to_string(shape.ranks) + "; use a multiple of it, got " +
                            std::to_string(shape.microbatches));
}

std::vector<NeededSetting> Interleaved::settings_needed(const Plan& plan) const {
  std::vector<NeededSetting> needed;
  for (NeededSetting& n : Schedule::settings_needed(plan))  // the virtual stages are this schedule's own
    if (n.key != "parallel.virtual_stages") needed.push_back(std::move(n));
  if (plan.parallel.virtual_stages == 1)
    needed.push_back({"parallel.virtual_stages", std::to_string(kDefaultChunks),
                      "schedule interleaved needs at least 2 virtual stages (chunks) per rank; set "
                      "parallel.virtual_stages=2 or more, or use schedule=1f1b"});
  return needed;
}

std::vector<ChunkRef> Interleaved::table() const {
  // Megatron's schedule table: groups of P microbatches, each run through chunk 0, then chunk 1, ...
  const int64_t P = ranks(), m = microbatches();
  std::vector<ChunkRef> t;
  t.reserve(size_t(m * chunks_));
  for (int64_t g = 0; g < m; g += P)
    for (int32_t c = 0; c < chunks_; ++c)
      for (int64_t mb = g; mb < std::min(m, g + P); ++mb) t.push_back({int32_t(mb), c});
  return t;
}

std::vector<ChunkOp> Interleaved::program(int64_t rank) const {
  const int64_t P = ranks(), total = microbatches() * chunks_;
  const int64_t warmup =
      microbatches() == P ? total : std::min(total, 2 * (P - 1 - rank) + (chunks_ - 1) * P);
  const std::vector<ChunkRef> t = table();
  std::vector<ChunkOp> ops;
  ops.reserve(size_t(2 * total));
  const auto forward = [&](int64_t k) { ops.push_back({Pass::F, false, t[size_t(k)], {}}); };
  const auto backward = [&](int64_t k) {
    ChunkRef ref = t[size_t(k)];
    ref.chunk = chunks_ - 1 - ref.chunk;  // backwards run the chunks in reverse
    ops.push_back({Pass::B, false, {}, ref});
  };
  one_forward_one_backward(total, warmup, forward, backward);
  return ops;
}

}  // namespace stepsim::sched
