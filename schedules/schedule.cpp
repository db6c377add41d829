#include "schedules/schedule.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "schedules/pipeline_flow.hpp"

namespace stepsim::sched {

const char* to_string(Pass p) {
  switch (p) {
    case Pass::F: return "F";
    case Pass::B: return "B";
    case Pass::W: return "W";
    case Pass::FB: return "F&B";
  }
  return "?";
}

double Schedule::bubble_share() const {
  const ChunkTimes seed{1, 2, 1, 3};
  return bubble_s(seed) / busy_s(seed);
}

double Schedule::in_flight_microbatches(int64_t rank) const {
  int64_t held = 0, peak = 0;
  for (const ChunkOp& op : program(rank)) {
    if (op.has_forward()) peak = std::max(peak, ++held);
    if (op.has_backward()) --held;
  }
  return double(peak) / double(chunks_per_rank());
}

double Schedule::sends_per_microbatch() const {
  int64_t busiest = 0;
  for (int64_t r = 0; r < ranks(); ++r) {
    int64_t sends = 0;
    for (const ChunkOp& op : program(r)) {
      if (op.has_forward())
        if (auto t = forward_output(*this, r, op.fwd); t && t->peer_rank != r) ++sends;
      if (op.has_backward())
        if (auto t = backward_output(*this, r, op.bwd); t && t->peer_rank != r) ++sends;
    }
    busiest = std::max(busiest, sends);
  }
  return double(busiest) / double(microbatches());
}

bool Schedule::overlaps_pairs() const {
  for (int64_t r = 0; r < ranks(); ++r)
    for (const ChunkOp& op : program(r))
      if (op.pass == Pass::FB) return true;
  return false;
}

void Schedule::check_shape(const ScheduleShape& shape) const {
  if (shape.ranks < 1) throw ScheduleError("parallel.pp", std::string(name()) + " needs at least one pipeline rank");
  if (shape.microbatches < 1)
    throw ScheduleError("parallel.microbatches", std::string(name()) + " needs at least one microbatch");
  if (shape.virtual_stages > 1)
    throw ScheduleError("parallel.virtual_stages", "only schedule interleaved runs virtual stages; set "
                                                   "parallel.virtual_stages=1 or schedule=interleaved");
}

std::vector<NeededSetting> Schedule::settings_needed(const Plan& plan) const {
  std::vector<NeededSetting> needed;
  if (plan.parallel.zero == 3 && !shards_parameters())
    needed.push_back({"parallel.zero", "1", "ZeRO-3 is modelled with schedule fsdp only; set parallel.zero=1 or 2, or schedule=fsdp"});
  if (!plan.parallel.split_backward && defers_weight_gradients())
    needed.push_back({"parallel.split_backward", "true",
                      "schedule " + std::string(name()) +
                          " defers weight gradients (zero bubble), which needs the backward split into input and "
                          "weight gradient; set parallel.split_backward=true or schedule=1f1b"});
  if (plan.parallel.virtual_stages > 1)
    needed.push_back({"parallel.virtual_stages", "1",
                      "only schedule interleaved runs virtual stages; set parallel.virtual_stages=1 or schedule=interleaved"});
  return needed;
}

void Schedule::check_plan(const Plan& plan) const {
  const auto needed = settings_needed(plan);
  if (!needed.empty()) throw ScheduleError(needed.front().key, needed.front().message);
}

void VShapedSchedule::check_shape(const ScheduleShape& shape) const {
  Schedule::check_shape(shape);
  if (shape.microbatches < 2 * shape.ranks)
    throw ScheduleError("parallel.microbatches", std::string(title()) + " needs at least 2 x parallel.pp = " +
                                                     std::to_string(2 * shape.ranks) + " microbatches, got " +
                                                     std::to_string(shape.microbatches));
}

}  // namespace stepsim::sched
