// Every pipeline schedule, simulated without communication on the synthetic workload with
// F = 1, B = 2, W = 1 per chunk (F&B = F + B), idles exactly its closed-form bubble on every rank.
// Expected values are the published formulas evaluated here (DeepSeek-V3 report table 2 and the
// DualPipe README; GPipe and interleaved from their papers), and the schedule's own bubble_s must
// agree with them.
#include <gtest/gtest.h>

#include "schedules/registry.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

constexpr double F = 1, B = 2, W = 1, FB = F + B;

void check(const std::string& name, int P, int m, double expected_bubble, int v = 1) {
  Synthetic s{.schedule = name, .pp = P, .microbatches = m, .f_s = F, .b_s = B, .w_s = W};
  if (v > 1) s.extra.push_back("parallel.virtual_stages=" + std::to_string(v));
  const Plan plan = synthetic_plan(s);
  const auto sch = sched::make_schedule(plan);
  EXPECT_DOUBLE_EQ(sch->bubble_s({F, B, W, FB}), expected_bubble) << name << " P=" << P << " m=" << m;
  const SimResult r = run_synthetic(s);
  ASSERT_EQ(r.ranks.size(), size_t(P));
  const double busy = double(sch->microbatches_per_chunk() * sch->chunks_per_rank()) * (F + B);
  for (const RankResult& rr : r.ranks) {
    EXPECT_NEAR(rr.compute_s, busy, 1e-9 * busy) << name << " rank " << rr.rank;
    EXPECT_NEAR(rr.bubble_s, expected_bubble, 1e-9 * busy) << name << " P=" << P << " m=" << m << " rank " << rr.rank;
  }
  EXPECT_NEAR(r.step_time_s, busy + expected_bubble, 1e-9 * busy);
}

TEST(SyntheticClosedForm, GPipe) {  // (PP-1)(F+B)
  for (int P : {2, 4, 8}) check("gpipe", P, 2 * P, (P - 1) * (F + B));
  check("gpipe", 4, 3, 3 * (F + B));
}

TEST(SyntheticClosedForm, OneFOneB) {  // (PP-1)(F+B)
  for (int P : {2, 4, 8})
    for (int m : {P, 3 * P}) check("1f1b", P, m, (P - 1) * (F + B));
}

TEST(SyntheticClosedForm, Interleaved) {  // (PP-1)(F+B)/v in whole-rank times = (PP-1)(F+B) per chunk
  for (int P : {2, 4})
    for (int v : {2, 3})
      for (int m : {P, 2 * P, 4 * P}) check("interleaved", P, m, (P - 1) * (F + B), v);
}

TEST(SyntheticClosedForm, ZbH1) {  // ZB1P: (PP-1)(F+B-2W)
  for (int P : {2, 4, 8})
    for (int m : {P, 2 * P, 3 * P + 1}) check("zb-h1", P, m, (P - 1) * (F + B - 2 * W));
}

TEST(SyntheticClosedForm, ZbV) {  // the fill only: (P-1)(F+B-2W) = (P-1)F at these times
  for (int P : {2, 4, 8})
    for (int m : {2 * P, 3 * P}) check("zb-v", P, m, (P - 1) * (F + B - 2 * W));
}

TEST(SyntheticClosedForm, DualPipe) {  // (PP/2-1)(F&B+B-3W)
  for (int P : {2, 4, 8})
    for (int m : {2 * P, 4 * P}) check("dualpipe", P, m, (P / 2 - 1) * (FB + B - 3 * W));
}

TEST(SyntheticClosedForm, DualPipeV) {  // (PP/2-1)(F&B+B-3W) with PP = 2P stages
  for (int P : {2, 4, 8})
    for (int m : {2 * P, 3 * P}) check("dualpipev", P, m, (P - 1) * (FB + B - 3 * W));
}

}  // namespace
}  // namespace stepsim::test
