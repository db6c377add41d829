// The unit-time layout: at each time step every rank runs its next 1F1B op if that op's input (the
// previous stage's forward, the next stage's backward) finished by then and, for a forward, the
// rank holds fewer than P microbatches (forwards minus Ws); else its oldest deferred W if it has
// one; else it idles. Ranks left with deferred Ws run them at the end.
#include "schedules/zb_h1.hpp"

#include <algorithm>
#include <deque>

namespace stepsim::sched {

ZbH1::ZbH1(const ScheduleShape& shape) : LinearSchedule(shape, {.name = "zb-h1", .defers_weight_gradients = true}) {
  const int64_t P = std::max<int64_t>(shape.ranks, 1), m = std::max<int64_t>(shape.microbatches, 1);
  // 1F1B's forwards and backwards per rank; backwards are input gradients only.
  std::vector<std::vector<ChunkOp>> order(static_cast<size_t>(P));
  for (int64_t r = 0; r < P; ++r) {
    const int64_t warmup = std::min(P - 1 - r, m);
    auto& o = order[size_t(r)];
    const auto f = [&](int64_t mb) { o.push_back({Pass::F, false, {int32_t(mb), 0}, {}}); };
    const auto b = [&](int64_t mb) { o.push_back({Pass::B, true, {}, {int32_t(mb), 0}}); };
    one_forward_one_backward(m, warmup, f, b);
  }
  // Finish times (in steps) of each stage's forward and backward of each microbatch; -1 = not run.
  std::vector<int64_t> f_done(size_t(P * m), -1), b_done(size_t(P * m), -1);
  const auto at = [&](int64_t stage, int64_t mb) { return size_t(stage * m + mb); };
  std::vector<size_t> next(static_cast<size_t>(P), 0);
  std::vector<int64_t> in_flight(static_cast<size_t>(P), 0);  // forwards run minus Ws run
  std::vector<std::deque<int32_t>> deferred(static_cast<size_t>(P));
  programs_.assign(size_t(P), {});
  for (int64_t t = 0;; ++t) {
    bool left = false;
    for (int64_t r = 0; r < P; ++r) {
      auto& o = order[size_t(r)];
      size_t& i = next[size_t(r)];
      if (i == o.size()) continue;
      left = true;
      const ChunkOp& op = o[i];
      const int64_t mb = op.has_forward() ? op.fwd.mb : op.bwd.mb;
      const auto done_by_now = [&](const std::vector<int64_t>& v, int64_t stage) {
        return v[at(stage, mb)] >= 0 && v[at(stage, mb)] <= t;
      };
      const bool ready = op.has_forward() ? r == 0 || done_by_now(f_done, r - 1)
                                          : r == P - 1 || done_by_now(b_done, r + 1);
      // A forward would hold more than 1F1B's peak of P microbatches (a deferred W still needs
      // its microbatch's saved inputs): run a W first.
      const bool full = op.has_forward() && in_flight[size_t(r)] >= P;
      auto& pending = deferred[size_t(r)];
      if (ready && !(full && !pending.empty())) {
        (op.has_forward() ? f_done : b_done)[at(r, mb)] = t + 1;
        if (op.has_backward()) pending.push_back(int32_t(mb));
        if (op.has_forward()) ++in_flight[size_t(r)];
        programs_[size_t(r)].push_back(op);
        ++i;
      } else if (!pending.empty()) {
        programs_[size_t(r)].push_back({Pass::W, false, {}, {pending.front(), 0}});
        pending.pop_front();
        --in_flight[size_t(r)];
      }
    }
    if (!left) break;
  }
  for (int64_t r = 0; r < P; ++r)
    for (const int32_t mb : deferred[size_t(r)]) programs_[size_t(r)].push_back({Pass::W, false, {}, {mb, 0}});
}

}  // namespace stepsim::sched
