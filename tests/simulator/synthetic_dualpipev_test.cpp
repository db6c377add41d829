// DualPipeV without communication. Every rank runs N forwards and N backwards of each of its two
// chunks, so with F&B = F + B its busy time is 2N(F + B), and DualPipe's README gives the bubble
// (PP/2 - 1)(F&B + B - 3W) with PP = 2P stages -- exact on every rank when W = F.
// With F&B < F + B or W < F the per-rank bubbles differ; those expected values are the idealised
// DES results tabulated in /work/shared/reference/FACTS.md section 3 (cited, not recomputed here).
#include <gtest/gtest.h>

#include <vector>

#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

Synthetic dualpipev(int P, int N, double f, double b, double w, double fb) {
  Synthetic s{.schedule = "dualpipev", .pp = P, .microbatches = N, .f_s = f, .b_s = b, .w_s = w, .fb_s = fb};
  return s;
}

// F = W: the README formula holds on every rank.
void check_readme_formula(int P, int N) {
  const double F = 1, B = 2, W = 1, FB = F + B;
  const SimResult r = run_synthetic(dualpipev(P, N, F, B, W, FB));
  const double busy = 2 * N * (F + B);
  const double bubble = (P - 1) * (FB + B - 3 * W);  // (PP/2 - 1) with PP = 2P stages
  EXPECT_NEAR(r.step_time_s, busy + bubble, 1e-9 * busy);
  ASSERT_EQ(r.ranks.size(), size_t(P));
  for (const RankResult& rr : r.ranks) {
    EXPECT_NEAR(rr.compute_s, busy, 1e-9 * busy) << "rank " << rr.rank;
    EXPECT_NEAR(rr.bubble_s, bubble, 1e-9 * busy) << "rank " << rr.rank;
    EXPECT_EQ(rr.exposed_comm_s, 0);
  }
  expect_exact_split(r);
}

TEST(SyntheticDualPipeV, P4N10) { check_readme_formula(4, 10); }   // 66, bubble 6
TEST(SyntheticDualPipeV, P4N20) { check_readme_formula(4, 20); }   // 126
TEST(SyntheticDualPipeV, P8N16) { check_readme_formula(8, 16); }   // 110, bubble 14
TEST(SyntheticDualPipeV, P8N32) { check_readme_formula(8, 32); }   // 206, bubble 14
TEST(SyntheticDualPipeV, P1N2) { check_readme_formula(1, 2); }     // no pipeline: no bubble

void check_facts_row(int P, int N, double F, double B, double W, double FB, double makespan,
                     const std::vector<double>& bubbles) {
  const SimResult r = run_synthetic(dualpipev(P, N, F, B, W, FB));
  EXPECT_NEAR(r.step_time_s, makespan, 1e-9 * makespan);
  ASSERT_EQ(r.ranks.size(), bubbles.size());
  for (size_t i = 0; i < bubbles.size(); ++i)
    EXPECT_NEAR(r.ranks[i].bubble_s, bubbles[i], 1e-9 * makespan) << "rank " << i;
  expect_exact_split(r);
}

// FACTS.md section 3, DERIVED table rows.
TEST(SyntheticDualPipeV, FactsP4N10Fb2) { check_facts_row(4, 10, 1, 2, 1, 2, 52, {1, 2, 3, 3}); }
TEST(SyntheticDualPipeV, FactsP4N10W05) { check_facts_row(4, 10, 1, 2, 0.5, 2.5, 62.5, {7, 7.5, 8, 8}); }
TEST(SyntheticDualPipeV, FactsP8N32W05) {
  check_facts_row(8, 32, 1, 2, 0.5, 2.5, 188.5, {17, 17.5, 18, 18.5, 19, 19.5, 20, 20});
}
TEST(SyntheticDualPipeV, FactsP8N64Fb25) {
  check_facts_row(8, 64, 1, 2, 1, 2.5, 339, {7.5, 8, 8.5, 9, 9.5, 10, 10.5, 10.5});
}

}  // namespace
}  // namespace stepsim::test
