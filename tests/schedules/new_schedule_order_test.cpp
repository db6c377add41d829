// The op order of GPipe, interleaved 1F1B, ZB-H1, ZB-V and DualPipe on small cases, each traced by
// hand from its reference (see each schedule's header): the expected strings below were written
// from those definitions step by step, not from the program's output.
#include <gtest/gtest.h>

#include "schedules/dualpipe.hpp"
#include "schedules/interleaved.hpp"
#include "schedules/one_f_one_b.hpp"
#include "schedules/registry.hpp"
#include "schedules/zb_h1.hpp"
#include "schedules/zb_v.hpp"
#include "tests/schedules/schedule_test_util.hpp"

namespace stepsim::test {
namespace {

TEST(GPipeOrder, AllForwardsThenAllBackwards) {
  sched::GPipe s({2, 3});
  EXPECT_EQ(program_text(s.program(0)), "F0.0 F0.1 F0.2 B0.0 B0.1 B0.2");
  EXPECT_EQ(program_text(s.program(1)), "F0.0 F0.1 F0.2 B0.0 B0.1 B0.2");
}

// Megatron's interleaved order, P = 2, v = 2, m = 4: the k-th forward is chunk (k/2)%2 of
// microbatch (k/4)*2 + k%2: (0,c0) (1,c0) (0,c1) (1,c1) (2,c0) (3,c0) (2,c1) (3,c1); backwards the
// same with chunks reversed. Warm-up: 2(P-1-r) + (v-1)P = 4 on rank 0, 2 on rank 1.
TEST(InterleavedOrder, TwoRanksTwoChunksFourMicrobatches) {
  sched::Interleaved s({2, 4, 2});
  EXPECT_EQ(program_text(s.program(0)),
            "F0.0 F0.1 F1.0 F1.1 F0.2 B1.0 F0.3 B1.1 F1.2 B0.0 F1.3 B0.1 B1.2 B1.3 B0.2 B0.3");
  EXPECT_EQ(program_text(s.program(1)),
            "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 F0.2 B0.0 F0.3 B0.1 F1.2 B1.2 F1.3 B1.3 B0.2 B0.3");
  // Rank r chunk c is stage c*P + r: microbatches loop through the ranks twice.
  EXPECT_EQ(s.stage_of(1, 0), 1);
  EXPECT_EQ(s.stage_of(0, 1), 2);
  EXPECT_EQ(s.stage_of(1, 1), 3);
  for (int st = 0; st < 4; ++st) EXPECT_EQ(s.stage_of(s.where(st).rank, s.where(st).chunk), st);
}

TEST(InterleavedOrder, AsManyMicrobatchesAsRanksWarmsUpFully) {
  sched::Interleaved s({2, 2, 2});
  EXPECT_EQ(program_text(s.program(1)), "F0.0 F0.1 F1.0 F1.1 B1.0 B1.1 B0.0 B0.1");
}

// P = 2, m = 3 in unit time, at most P = 2 microbatches held (forwards minus Ws). Rank 1 (last
// stage): F0 [1,2] B0 [2,3] F1 [3,4] B1 [4,5]; F2 would hold a third, so W0 [5,6]; F2 [6,7]
// (rank 0 sent it at 6) B2 [7,8], then W1 W2. Rank 0: F0 F1, idles at t=2 waiting for rank 1's
// B0, B0 [3,4]; F2 would hold a third, so W0 [4,5]; F2 [5,6] B1 [6,7]; B2 waits for rank 1 (ends
// at 8), so W1 [7,8]; B2 [8,9] W2 [9,10]. Both end at 10 = busy 9 + bubble (P-1)(F+B-2W) = 1.
TEST(ZbH1Order, TwoRanksThreeMicrobatches) {
  sched::ZbH1 s({2, 3});
  EXPECT_EQ(program_text(s.program(0)), "F0.0 F0.1 B0.0z W0.0 F0.2 B0.1z W0.1 B0.2z W0.2");
  EXPECT_EQ(program_text(s.program(1)), "F0.0 B0.0z F0.1 B0.1z W0.0 F0.2 B0.2z W0.1 W0.2");
}

// torch's ScheduleZBVZeroBubble order for P = 2, m = 4. Rank 0: warm-up 3 F0, no (F1, F0) pairs,
// 2 triples (F1 B1 W1); steady (F0 B0 W0 F1 B1 W1) while F1 trails F0 or F0 < m, skipping F0 once
// all 4 ran; cool-down 2 x (B0 W0). Rank 1: warm-up 1 F0, 1 pair, 1 triple; steady twice; cool-down
// (B0 B1), (B0 W0), then the leftover W1 and W0.
TEST(ZbVOrder, TwoRanksFourMicrobatches) {
  sched::ZbV s({2, 4});
  EXPECT_EQ(program_text(s.program(0)),
            "F0.0 F0.1 F0.2 F1.0 B1.0z W1.0 F1.1 B1.1z W1.1 F0.3 B0.0z W0.0 F1.2 B1.2z W1.2 B0.1z W0.1 F1.3 B1.3z "
            "W1.3 B0.2z W0.2 B0.3z W0.3");
  EXPECT_EQ(program_text(s.program(1)),
            "F0.0 F1.0 F0.1 F1.1 B1.0z W1.0 F0.2 B0.0z W0.0 F1.2 B1.1z W1.1 F0.3 B0.1z W0.1 F1.3 B1.2z W1.2 B0.2z "
            "B1.3z B0.3z W0.2 W1.3 W0.3");
  EXPECT_EQ(s.stage_of(1, 0), 1);
  EXPECT_EQ(s.stage_of(1, 1), 2);
}

// DualPipe P = 2, m = 4: each rank is its half's middle rank and runs DualPipeV's steps for one
// rank and 2 microbatches per phase: F0 F1 | step 4 unpaired F0 B1, then F1&B0 | step 6 B1, B0z
// (even half-rank: switch after B1) | step 8 W. Rank 0's phase 0 is direction 0 (microbatches
// 0, 1), phase 1 direction 1 (microbatches 2, 3); rank 1 the other way round.
TEST(DualPipeOrder, TwoRanksFourMicrobatches) {
  sched::DualPipe s({2, 4});
  EXPECT_EQ(program_text(s.program(0)), "F0.0 F1.2 F0.1 B1.2 F1.3&B0.0 B1.3 B0.1z W0.1");
  EXPECT_EQ(program_text(s.program(1)), "F1.2 F0.0 F1.3 B0.0 F0.1&B1.2 B0.1 B1.3z W1.3");
  // Direction 0: rank 0 then rank 1; direction 1: rank 1 then rank 0. Both directions' i-th stage
  // run layer slot i, so each rank holds two slots: the parameters twice over.
  EXPECT_EQ(s.stage_of(0, 0), 0);
  EXPECT_EQ(s.stage_of(1, 0), 1);
  EXPECT_EQ(s.stage_of(1, 1), 2);
  EXPECT_EQ(s.stage_of(0, 1), 3);
  EXPECT_EQ(s.layer_slot(s.stage_of(0, 1)), 1);
  EXPECT_EQ(s.parameter_copies(), 2);
}

TEST(DualPipeOrder, FourRanksMatchDualPipeVOnEachHalf) {
  // Ranks r and P-1-r run the same steps as DualPipeV's rank min(r, P-1-r) of P/2 ranks with m/2
  // microbatches per phase, phases mirrored.
  const auto dp = sched::make_schedule(Schedule{"dualpipe"}, 4, 8);
  const auto v = sched::make_schedule(Schedule{"dualpipev"}, 2, 4);
  for (int r = 0; r < 4; ++r) {
    const auto a = dp->program(r), b = v->program(r < 2 ? r : 3 - r);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].pass, b[i].pass);
      EXPECT_EQ(a[i].zero_bubble, b[i].zero_bubble);
      if (a[i].has_forward()) EXPECT_EQ(a[i].fwd.chunk, r < 2 ? b[i].fwd.chunk : 1 - b[i].fwd.chunk);
    }
  }
}

}  // namespace
}  // namespace stepsim::test
