// Interleaved 1F1B (Narayanan et al. 2021; Megatron-LM's forward_backward_pipelining_with_
// interleaving): each of P ranks holds v = parallel.virtual_stages chunks, rank r chunk c being
// stage c*P + r, so a microbatch loops through the ranks v times. Microbatches run in groups of P
// (Megatron's schedule table; m must be a multiple of P): each group through chunk 0, then
// chunk 1, ...; backwards the same with the chunks reversed. Rank r warms up with
// 2(P-1-r) + (v-1)P forwards (all of them when m = P), then alternates one forward and one
// backward. B includes W.
// Bubble: (PP-1)(F+B)/v in whole-rank times, i.e. (PP-1)(F+B) in per-chunk times.
#pragma once

#include "schedules/schedule.hpp"

namespace stepsim::sched {

class Interleaved final : public Schedule {
 public:
  explicit Interleaved(const ScheduleShape& shape)
      : Schedule(shape, {.name = "interleaved"}),
        chunks_(int32_t(shape.virtual_stages > 0 ? shape.virtual_stages : kDefaultChunks)) {}
  // parallel.virtual_stages left unset: two chunks per rank, the smallest interleaving.
  static constexpr int32_t kDefaultChunks = 2;
  int32_t chunks_per_rank() const override { return chunks_; }
  int64_t stage_of(int64_t rank, int32_t chunk) const override { return chunk * ranks() + rank; }
  StageLoc where(int64_t stage) const override { return {stage % ranks(), int32_t(stage / ranks())}; }
  std::vector<ChunkOp> program(int64_t rank) const override;
  double bubble_s(const ChunkTimes& t) const override { return double(ranks() - 1) * (t.f_s + t.b_s); }
  void check_shape(const ScheduleShape& shape) const override;
  std::vector<NeededSetting> settings_needed(const Plan& plan) const override;

 private:
  std::vector<ChunkRef> table() const;
  int32_t chunks_;
};

}  // namespace stepsim::sched
