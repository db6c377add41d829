// parallel.overlap_shared_expert: a forward MoE layer's shared expert does not wait for its
// dispatch, so it computes while the dispatch moves. Closed form on a plan whose forward dispatch
// outlasts the shared expert (one pipeline rank, one microbatch of one 4096-token sequence per
// GPU, four MoE layers, a slow network): every layer's forward MLP finishes one shared expert
// earlier, so the step and every GPU's exposed all-to-all shrink by 4 shared experts. The shared
// expert's time by hand: DeepSeek-V3's shared expert is 3 x 7168 x 2048 = 44,040,192 weights
// (FACTS.md), 2 FLOPs per weight and token, FP8 at 1000 TFLOP/s (set here; speed of light, no
// efficiency below 1).
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/simulator/sim_test_util.hpp"
#include "workloads/model/model_workload.hpp"

namespace stepsim::test {
namespace {

constexpr int kMoeLayers = 4;
constexpr double kSharedExpertS = 2.0 * 44040192 * 4096 / 1000e12;

SimResult run(bool overlap) {
  return slow_ep16_moe_run(
      {"hardware.fp8_tflops=1000", std::string("parallel.overlap_shared_expert=") + (overlap ? "true" : "false")});
}

TEST(SharedExpertOverlap, EachForwardMoeLayerHidesOneSharedExpertBehindItsDispatch) {
  const SimResult after = run(false), during = run(true);
  ASSERT_EQ(after.ranks.size(), 16u);
  ASSERT_EQ(during.ranks.size(), 16u);
  // The premise: every forward dispatch outlasts a shared expert.
  double shortest_dispatch_s = 1e9;
  for (const Span& s : during.spans)
    if (ops::comm_class(s.tag.kind) == ops::CommClass::Ep && s.tag.kind == ops::OpKind::EpDispatch && s.tag.phase == ops::Phase::Forward)
      shortest_dispatch_s = std::min(shortest_dispatch_s, s.end_s - s.start_s);
  ASSERT_GT(shortest_dispatch_s, kSharedExpertS);
  for (size_t i = 0; i < after.ranks.size(); ++i) {
    const RankResult &a = after.ranks[i], &d = during.ranks[i];
    ASSERT_EQ(a.rank, d.rank);
    EXPECT_NEAR(d.compute_s, a.compute_s, 1e-9 * a.compute_s) << "gpu " << a.rank;  // same work
    EXPECT_NEAR(a.exposed_s[ops::CommClass::Ep] - d.exposed_s[ops::CommClass::Ep], kMoeLayers * kSharedExpertS, 1e-6 * after.step_time_s)
        << "gpu " << a.rank;
  }
  EXPECT_NEAR(after.step_time_s - during.step_time_s, kMoeLayers * kSharedExpertS, 1e-6 * after.step_time_s);
  expect_exact_split(during);
}

// The shared-expert op starts before its layer's dispatch has arrived.
TEST(SharedExpertOverlap, TheSharedExpertStartsWhileItsDispatchMoves) {
  const SimResult r = run(true);
  int overlapped = 0;
  for (const Span& d : r.spans) {
    if (d.rank != 0 || ops::comm_class(d.tag.kind) != ops::CommClass::Ep || d.tag.kind != ops::OpKind::EpDispatch ||
        d.tag.phase != ops::Phase::Forward)
      continue;
    for (const Span& c : r.spans)
      if (c.rank == 0 && c.stream == ops::kComputeStream && c.tag.kind == ops::OpKind::MoeGemm &&
          c.tag.phase == ops::Phase::Forward && c.tag.layer == d.tag.layer && c.start_s < d.end_s) {
        EXPECT_NEAR(c.end_s - c.start_s, kSharedExpertS, 1e-9);
        ++overlapped;
      }
  }
  EXPECT_EQ(overlapped, kMoeLayers);
}

}  // namespace
}  // namespace stepsim::test
