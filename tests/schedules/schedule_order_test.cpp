// The exact op order of each schedule on small cases, derived by hand from the schedule's
// definition (1F1B: warm-up P-1-r forwards; DualPipeV: the eight steps of dualpipev.py's step()).
#include <gtest/gtest.h>

#include <stdexcept>

#include "schedules/dualpipev.hpp"
#include "schedules/fsdp_schedule.hpp"
#include "schedules/one_f_one_b.hpp"
#include "schedules/registry.hpp"
#include "tests/schedules/schedule_test_util.hpp"

namespace stepsim::test {
namespace {

TEST(OneFOneBOrder, WarmupSteadyCooldown) {
  sched::OneFOneB s({4, 5});
  EXPECT_EQ(program_text(s.program(0)), "F0.0 F0.1 F0.2 F0.3 B0.0 F0.4 B0.1 B0.2 B0.3 B0.4");
  EXPECT_EQ(program_text(s.program(1)), "F0.0 F0.1 F0.2 B0.0 F0.3 B0.1 F0.4 B0.2 B0.3 B0.4");
  EXPECT_EQ(program_text(s.program(3)), "F0.0 B0.0 F0.1 B0.1 F0.2 B0.2 F0.3 B0.3 F0.4 B0.4");
}

TEST(OneFOneBOrder, FewerMicrobatchesThanWarmup) {
  sched::OneFOneB s({4, 2});
  EXPECT_EQ(program_text(s.program(0)), "F0.0 F0.1 B0.0 B0.1");
}

TEST(FsdpOrder, ForwardThenBackwardPerMicrobatch) {
  sched::FsdpSchedule s({1, 3});
  EXPECT_EQ(program_text(s.program(0)), "F0.0 B0.0 F0.1 B0.1 F0.2 B0.2");
  EXPECT_THROW(sched::make_schedule(Schedule{"fsdp"}, 2, 3), std::invalid_argument);
}

// P = 2, N = 4, traced through dualpipev.py by hand.
TEST(DualPipeVOrder, TwoRanksFourMicrobatches) {
  sched::DualPipeV s({2, 4});
  // rank 0: step1 F0 F0 | step2 F0 F1 | step3 B1z W F1 | step4 (F0&B1) (F1&B0) | step5 B1 (F1&B0)
  //         | step6 B1 B0z (rank even: switch after B1) | step7 W B0z | step8 W
  EXPECT_EQ(program_text(s.program(0)),
            "F0.0 F0.1 F0.2 F1.0 B1.0z W1.0 F1.1 F0.3&B1.1 F1.2&B0.0 B1.2 F1.3&B0.1 B1.3 B0.2z W0.2 B0.3z "
            "W0.3");
  // rank 1 (last): step2 (F0 F1) x2 | step4 first pair not overlapped: F0 B1, then F1&B0;
  //         (F0&B1) (F1&B0) | step6 B1 B0, then (rank odd: switch before B1) B1z B0z | step8 W W
  EXPECT_EQ(program_text(s.program(1)),
            "F0.0 F1.0 F0.1 F1.1 F0.2 B1.0 F1.2&B0.0 F0.3&B1.1 F1.3&B0.1 B1.2 B0.2 B1.3z B0.3z W1.3 W0.3");
}

TEST(DualPipeVOrder, StepSizes) {
  const int P = 4, N = 10;
  sched::DualPipeV s({P, N});
  for (int r = 0; r < P; ++r) {
    const auto ops = s.program(r);
    // Step 1: 2(P-r-1) forwards of chunk 0 open every rank's program (then step 2's F0).
    for (int i = 0; i < 2 * (P - r - 1) + 1; ++i) EXPECT_EQ(op_text(ops[size_t(i)]), "F0." + std::to_string(i));
    // Step 8: r+1 weight gradients close it.
    for (int i = 0; i < r + 1; ++i) EXPECT_EQ(ops[ops.size() - 1 - size_t(i)].pass, sched::Pass::W) << r;
    int pairs = 0;
    for (const auto& op : ops) pairs += op.pass == sched::Pass::FB;
    // Step 4 has 2 pairs per iteration (the last rank's first is split), step 5 one.
    EXPECT_EQ(pairs, 2 * (N - 2 * P + r + 1) - (r == P - 1 ? 1 : 0) + (P - r - 1)) << "rank " << r;
  }
}

TEST(DualPipeVOrder, NeedsTwiceAsManyMicrobatchesAsRanks) {
  EXPECT_THROW(sched::make_schedule(Schedule{"dualpipev"}, 4, 7), std::invalid_argument);
  EXPECT_NO_THROW(sched::make_schedule(Schedule{"dualpipev"}, 4, 8));
}

TEST(DualPipeVOrder, VShapedPlacement) {
  sched::DualPipeV s({4, 8});
  EXPECT_EQ(s.stages(), 8);
  EXPECT_EQ(s.stage_of(0, 0), 0);
  EXPECT_EQ(s.stage_of(0, 1), 7);
  EXPECT_EQ(s.stage_of(3, 0), 3);
  EXPECT_EQ(s.stage_of(3, 1), 4);
  for (int st = 0; st < 8; ++st) EXPECT_EQ(s.stage_of(s.where(st).rank, s.where(st).chunk), st);
}

TEST(MakeSchedule, PicksByKind) {
  EXPECT_STREQ(sched::make_schedule(Schedule{"1f1b"}, 4, 8)->name(), "1f1b");
  EXPECT_STREQ(sched::make_schedule(Schedule{"dualpipev"}, 4, 8)->name(), "dualpipev");
  EXPECT_STREQ(sched::make_schedule(Schedule{"fsdp"}, 1, 8)->name(), "fsdp");
}

}  // namespace
}  // namespace stepsim::test
