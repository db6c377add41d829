// Recompute costs time in the replay as in the roofline: Llama 3.1 8B with every policy replayed,
// its mean compute against the closed form (which counts the same recomputed FLOPs).
#include <gtest/gtest.h>

#include "simulator/roofline/roofline.hpp"
#include "tests/mixtral_plan.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

Plan llama(const char* recompute) {
  return load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml",
                   {std::string("parallel.recompute=") + recompute, "sim.compute=speed-of-light"});
}

double mean_compute(const Plan& plan) {
  const SimResult r = in_child([&] { return simulate(plan, SimOptions{true, false}); });
  expect_exact_split(r);
  double s = 0;
  for (const auto& rank : r.ranks) s += rank.compute_s;
  return s / double(r.ranks.size());
}

TEST(RecomputeStep, EveryPolicyCostsItsRecomputedFlopsInTheReplay) {
  const double none = mean_compute(llama("none"));
  for (const char* policy : {"selective", "full"}) {
    const Plan p = llama(policy);
    const Roofline r = compute_roofline(p);
    const double replayed = mean_compute(p);
    // The roofline's N counts RMSNorm weights (65 x 4096 of 8e9, 3e-5), the replay only GEMMs.
    EXPECT_NEAR(replayed, r.compute_s, 1e-4 * r.compute_s) << policy;
    EXPECT_NEAR(replayed - none, r.terms.recompute_s, 1e-3 * r.terms.recompute_s) << policy;
  }
}

TEST(RecomputeStep, FullRecomputeSendsTheAllToAllsAgain) {
  // Mixtral 8x7B with EP 8 inside each node of the Llama plan: a third pass of dispatch + combine.
  const auto plan = [](const char* recompute) {
    return mixtral_on_llama_plan({"parallel.ep=8", std::string("parallel.recompute=") + recompute});
  };
  const Roofline none = compute_roofline(plan("none")), full = compute_roofline(plan("full"));
  EXPECT_NEAR(full.ep_comm_s, 1.5 * none.ep_comm_s, 1e-9 * full.ep_comm_s);
  const SimResult r = in_child([&] { return simulate(plan("full"), SimOptions{true, false}); });
  EXPECT_NEAR(r.comm_s[ops::CommClass::Ep], full.ep_comm_s, 0.01 * full.ep_comm_s);
}

}  // namespace
}  // namespace stepsim::test
