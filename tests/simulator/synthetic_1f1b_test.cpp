// 1F1B without communication: every rank is busy m(F+B) and the pipeline fills and drains once,
// so the makespan is (m + PP - 1)(F + B) and each rank's bubble is (PP - 1)(F + B).
#include <gtest/gtest.h>

#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

void check_1f1b(int pp, int m, double f, double b) {
  Synthetic s{.schedule = "1f1b", .pp = pp, .microbatches = m, .f_s = f, .b_s = b, .w_s = 0};
  const SimResult r = run_synthetic(s);
  const double makespan = (m + pp - 1) * (f + b);
  EXPECT_NEAR(r.step_time_s, makespan, 1e-9 * makespan);
  ASSERT_EQ(r.ranks.size(), size_t(pp));
  for (const RankResult& rr : r.ranks) {
    EXPECT_NEAR(rr.compute_s, m * (f + b), 1e-9 * makespan) << "rank " << rr.rank;
    EXPECT_NEAR(rr.bubble_s, (pp - 1) * (f + b), 1e-9 * makespan) << "rank " << rr.rank;
    EXPECT_EQ(rr.exposed_comm_s, 0) << "rank " << rr.rank;
  }
  expect_exact_split(r);
  EXPECT_EQ(r.activities, uint64_t(2 * m * pp));  // one Exec per chunk op, no transfers
}

TEST(Synthetic1F1B, Pp4M8F1B2) { check_1f1b(4, 8, 1, 2); }  // 33
TEST(Synthetic1F1B, Pp8M16F05B125) { check_1f1b(8, 16, 0.5, 1.25); }
TEST(Synthetic1F1B, Pp2M3) { check_1f1b(2, 3, 1.5, 2.5); }
TEST(Synthetic1F1B, FewerMicrobatchesThanStages) { check_1f1b(6, 2, 1, 2); }
TEST(Synthetic1F1B, SingleStage) { check_1f1b(1, 5, 1, 3); }

}  // namespace
}  // namespace stepsim::test
