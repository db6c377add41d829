// What each schedule implies, against values worked out by hand: activations in flight (forwards
// run minus backwards run at the peak, over the rank's chunks), pipeline sends per microbatch of
// the busiest rank, the roofline's bubble share, parameter copies, and the layer slots.
#include <gtest/gtest.h>

#include "schedules/registry.hpp"

namespace stepsim::test {
namespace {

TEST(ScheduleImplications, InFlightMicrobatches) {
  // 1F1B: rank r holds P - r (its warm-up forwards plus one); GPipe: all m.
  const auto f1b = sched::make_schedule(Schedule{"1f1b"}, 4, 8);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(f1b->in_flight_microbatches(r), 4 - r);
  EXPECT_EQ(sched::make_schedule(Schedule{"gpipe"}, 4, 8)->in_flight_microbatches(3), 8);
  // ZB-H1 keeps 1F1B's forwards and input-gradient backwards: the same.
  const auto zb = sched::make_schedule(Schedule{"zb-h1"}, 4, 8);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(zb->in_flight_microbatches(r), 4 - r);
  // DualPipeV: 2P + 1 chunks (the seed's PP + 1/2 in whole-rank units) on every rank.
  const auto dpv = sched::make_schedule(Schedule{"dualpipev"}, 8, 20);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(dpv->in_flight_microbatches(r), 8.5);
  // DualPipe: PP + 1 chunks (DualPipe README) over the rank's two chunks.
  const auto dp = sched::make_schedule(Schedule{"dualpipe"}, 8, 20);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(dp->in_flight_microbatches(r), 4.5);
  // Interleaved, rank 0: warm-up 2(P-1) + (v-1)P forwards plus one, over v chunks.
  EXPECT_EQ(sched::make_schedule(Schedule{"interleaved"}, 4, 8, 2)->in_flight_microbatches(0), (6.0 + 4 + 1) / 2);
  // ZB-V, rank 0: 2P-1 chunk-0 forwards and one chunk-1 forward before its first backward.
  EXPECT_EQ(sched::make_schedule(Schedule{"zb-v"}, 4, 8)->in_flight_microbatches(0), 4);
}

TEST(ScheduleImplications, SendsPerMicrobatch) {
  // A middle rank sends an activation and a gradient per microbatch and chunk.
  EXPECT_EQ(sched::make_schedule(Schedule{"1f1b"}, 4, 8)->sends_per_microbatch(), 2);
  EXPECT_EQ(sched::make_schedule(Schedule{"interleaved"}, 4, 8, 3)->sends_per_microbatch(), 6);
  EXPECT_EQ(sched::make_schedule(Schedule{"dualpipev"}, 4, 8)->sends_per_microbatch(), 4);
  EXPECT_EQ(sched::make_schedule(Schedule{"dualpipev"}, 2, 8)->sends_per_microbatch(), 2);  // the turn is local
  EXPECT_EQ(sched::make_schedule(Schedule{"zb-v"}, 4, 8)->sends_per_microbatch(), 4);
  // DualPipe: each direction carries half the microbatches through both of the rank's chunks.
  EXPECT_EQ(sched::make_schedule(Schedule{"dualpipe"}, 4, 8)->sends_per_microbatch(), 2);
  EXPECT_EQ(sched::make_schedule(Schedule{"1f1b"}, 1, 8)->sends_per_microbatch(), 0);
}

TEST(ScheduleImplications, BubbleShareWithSeedTimes) {
  // F = 1, B = 2, W = 1, F&B = 3 per chunk; busy 3 per forward-backward of a chunk.
  EXPECT_DOUBLE_EQ(sched::make_schedule(Schedule{"1f1b"}, 16, 120)->bubble_share(), 15.0 / 120);
  EXPECT_DOUBLE_EQ(sched::make_schedule(Schedule{"gpipe"}, 16, 120)->bubble_share(), 15.0 / 120);
  EXPECT_DOUBLE_EQ(sched::make_schedule(Schedule{"zb-h1"}, 16, 32)->bubble_share(), 15.0 / (3 * 32));
  EXPECT_DOUBLE_EQ(sched::make_schedule(Schedule{"interleaved"}, 8, 16, 2)->bubble_share(), 7.0 * 3 / (2 * 16 * 3));
  EXPECT_DOUBLE_EQ(sched::make_schedule(Schedule{"dualpipev"}, 8, 20)->bubble_share(), 7.0 * 2 / (2 * 20 * 3));
  EXPECT_DOUBLE_EQ(sched::make_schedule(Schedule{"dualpipe"}, 8, 20)->bubble_share(), 3.0 * 2 / (20 * 3));
  EXPECT_DOUBLE_EQ(sched::make_schedule(Schedule{"fsdp"}, 1, 20)->bubble_share(), 0);
}

TEST(ScheduleImplications, PlacementAndCopies) {
  EXPECT_EQ(sched::make_schedule(Schedule{"dualpipe"}, 4, 8)->path_stages(), 4);
  EXPECT_EQ(sched::make_schedule(Schedule{"dualpipe"}, 4, 8)->parameter_copies(), 2);
  EXPECT_EQ(sched::make_schedule(Schedule{"dualpipev"}, 4, 8)->path_stages(), 8);
  EXPECT_EQ(sched::make_schedule(Schedule{"dualpipev"}, 4, 8)->parameter_copies(), 1);
  EXPECT_EQ(sched::make_schedule(Schedule{"interleaved"}, 4, 8, 3)->path_stages(), 12);
  EXPECT_EQ(sched::make_schedule(Schedule{"interleaved"}, 4, 8)->chunks_per_rank(), 2);  // virtual_stages unset
  EXPECT_EQ(sched::make_schedule(Schedule{"1f1b"}, 4, 8)->chunks_per_rank(), 1);
  EXPECT_TRUE(sched::make_schedule(Schedule{"zb-v"}, 4, 8)->v_shape());
  EXPECT_FALSE(sched::make_schedule(Schedule{"interleaved"}, 4, 8, 2)->v_shape());
  EXPECT_FALSE(sched::make_schedule(Schedule{"capture"}, 1, 2)->runs_lm_head());
  EXPECT_FALSE(sched::make_schedule(Schedule{"capture"}, 1, 2)->optimizer_step());
  EXPECT_TRUE(sched::make_schedule(Schedule{"fsdp"}, 1, 2)->shards_parameters());
}

// defers_weight_gradients() (which parallel.split_backward=false is checked against) says what
// the order does: some backward leaves its W for a later W op.
TEST(ScheduleImplications, DefersWeightGradientsExactlyWhenTheOrderHasWOps) {
  for (const auto& e : sched::schedule_registry()) {
    const std::string_view name = e.name;
    const bool capture = name == "capture", fsdp = name == "fsdp";
    const auto s = sched::make_schedule(Schedule(name), capture || fsdp ? 1 : 4, capture ? 2 : 16);
    bool deferred = false;
    for (int64_t r = 0; r < s->ranks(); ++r)
      for (const sched::ChunkOp& op : s->program(r)) deferred |= op.zero_bubble || op.pass == sched::Pass::W;
    EXPECT_EQ(s->defers_weight_gradients(), deferred) << e.name;
  }
}

TEST(ScheduleRegistry, EveryNameRoundTrips) {
  for (const auto& e : sched::schedule_registry()) {
    ASSERT_TRUE(sched::schedule_named(e.name)) << e.name;
    EXPECT_EQ(sched::schedule_named(e.name)->name(), e.name);
    EXPECT_STREQ(to_string(*sched::schedule_named(e.name)), e.name);
  }
  EXPECT_FALSE(sched::schedule_named("zb-h2"));
}

}  // namespace
}  // namespace stepsim::test
