// parallel.split_backward: with the split (the default) a backward part's weight gradient (W) is
// its own op after the input gradient, so the all-to-all the input gradient starts runs while W
// computes; a plain autograd backward (false) makes them one op and the all-to-all waits for W.
// Closed form on a plan where every backward all-to-all outlasts the W in front of it (one
// pipeline rank, one microbatch, four MoE layers, a slow network): each W that sits in front of an
// all-to-all hides all of it, so the plain backward exposes exactly those W's more EP time, and
// the step (no bubble with one rank) grows by the same. Which W's those are, by the op order:
// the LM head's (in front of layer 3's combine-gradient), every layer's MLP W (its
// dispatch-gradient) and the attention W of layers 3..1 (the combine-gradient of the layer
// below); layer 0's attention W is the last compute of the step and hides nothing either way.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "tests/simulator/sim_test_util.hpp"
#include "workloads/model/model_workload.hpp"

namespace stepsim::test {
namespace {

using ops::OpKind;
using ops::Phase;

SimResult run(bool split) {
  return slow_ep16_moe_run({std::string("parallel.split_backward=") + (split ? "true" : "false")});
}

TEST(SplitBackward, PlainAutogradExposesTheWeightGradientsThatHidTheAllToAll) {
  const SimResult split = run(true), plain = run(false);
  ASSERT_EQ(split.ranks.size(), 16u);
  ASSERT_EQ(plain.ranks.size(), 16u);
  std::map<int32_t, double> hiding_w_s, longest_w_s, shortest_backward_a2a_s;
  for (const Span& s : split.spans) {
    const double d = s.end_s - s.start_s;
    if (s.stream == ops::kComputeStream && s.tag.phase == Phase::Weight) {
      const bool last_compute = s.tag.kind == OpKind::Attention && s.tag.layer == 0;
      if (!last_compute) hiding_w_s[s.rank] += d;
      longest_w_s[s.rank] = std::max(longest_w_s[s.rank], d);
    }
    if (ops::comm_class(s.tag.kind) == ops::CommClass::Ep && s.tag.phase == Phase::Backward) {
      auto [it, fresh] = shortest_backward_a2a_s.try_emplace(s.rank, d);
      if (!fresh) it->second = std::min(it->second, d);
    }
  }
  double most_hidden_s = 0;
  for (size_t i = 0; i < split.ranks.size(); ++i) {
    const RankResult &a = split.ranks[i], &b = plain.ranks[i];
    ASSERT_EQ(a.rank, b.rank);
    const int32_t gpu = int32_t(a.rank);
    // The closed form's premise: every W is shorter than any backward all-to-all.
    ASSERT_LT(longest_w_s[gpu], shortest_backward_a2a_s[gpu]) << "gpu " << gpu;
    EXPECT_NEAR(b.compute_s, a.compute_s, 1e-9 * a.compute_s) << "gpu " << gpu;  // same work
    EXPECT_NEAR(b.exposed_s[ops::CommClass::Ep] - a.exposed_s[ops::CommClass::Ep], hiding_w_s[gpu], 1e-6 * split.step_time_s) << "gpu " << gpu;
    most_hidden_s = std::max(most_hidden_s, hiding_w_s[gpu]);
  }
  EXPECT_GT(most_hidden_s, 0.0);
  EXPECT_NEAR(plain.step_time_s - split.step_time_s, most_hidden_s, 1e-6 * split.step_time_s);
  expect_exact_split(split);
  expect_exact_split(plain);
}

// Each backward dispatch-gradient's start less the end of its layer's MLP W, on every GPU.
std::vector<double> dispatch_after_w_s(const SimResult& r) {
  std::map<std::pair<int32_t, uint16_t>, double> mlp_w_end_s;
  for (const Span& s : r.spans)
    if (s.stream == ops::kComputeStream && s.tag.phase == Phase::Weight && s.tag.kind == OpKind::MoeGemm)
      mlp_w_end_s[{s.rank, s.tag.layer}] = s.end_s;
  std::vector<double> gaps;
  for (const Span& s : r.spans)
    if (ops::comm_class(s.tag.kind) == ops::CommClass::Ep && s.tag.kind == OpKind::EpDispatch && s.tag.phase == Phase::Backward)
      gaps.push_back(s.start_s - mlp_w_end_s.at({s.rank, s.tag.layer}));
  return gaps;
}

// Plain autograd: the dispatch-gradient leaves only after the layer's MLP W has finished.
TEST(SplitBackward, PlainAutogradSendsTheDispatchGradientAfterTheWeightGradient) {
  const std::vector<double> gaps = dispatch_after_w_s(run(false));
  EXPECT_EQ(gaps.size(), 16u * 4);
  for (double g : gaps) EXPECT_GE(g, -1e-12);
}

// DeepEP as DeepSeek's code runs it sends the dispatch-gradient once the input gradient is done, W
// computing while it moves; inside a framework's autograd (Megatron's flex dispatcher,
// software.moe_wgrad_before_dispatch) the same DeepEP transfer waits for W, as the alltoall
// dispatcher's does.
TEST(SplitBackward, AFrameworksAutogradSendsDeepEpsDispatchGradientAfterTheWeightGradient) {
  const std::vector<double> deepseek = dispatch_after_w_s(run(true));
  const std::vector<double> autograd =
      dispatch_after_w_s(slow_ep16_moe_run({"parallel.split_backward=true", "software.moe_wgrad_before_dispatch=true"}));
  ASSERT_EQ(deepseek.size(), 16u * 4);
  ASSERT_EQ(autograd.size(), 16u * 4);
  for (double g : deepseek) EXPECT_LT(g, 0);  // sent before W ended
  for (double g : autograd) EXPECT_GE(g, -1e-12);
}

}  // namespace
}  // namespace stepsim::test
