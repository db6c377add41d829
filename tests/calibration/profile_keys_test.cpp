// The hardware-profile keys change simulated times by their closed-form factor: GEMM and attention
// FLOPs run at rate x efficiency, an all-to-all moves bytes / a2a_efficiency after its handshake.
// Expected values are computed here by hand from DeepSeek-V3's shapes (FACTS.md section 1).
#include <gtest/gtest.h>

#include "simulator/calibration/capture_phases.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/runs/simulate.hpp"
#include "tests/calibration/calibration_test_util.hpp"

namespace stepsim {
namespace {

constexpr double T = 4096;              // tokens of one microbatch on one GPU
constexpr double R = T * 8;             // routed rows its experts get (balanced, top-8)
constexpr double kFp8 = 1456.6e12, kBf16 = 757.7e12;
// Per MoE layer (FACTS.md): FP8 weights outside the routed experts = q/kv down 15,138,816 + q up
// 37,748,736 + kv up 16,777,216 + attn out 117,440,512 + shared expert 44,040,192; one expert
// 3 x 7168 x 2048; router 1,835,264 (BF16).
constexpr double kDenseFp8 = 15138816.0 + 37748736 + 16777216 + 117440512 + 44040192;
constexpr double kExpert = 3.0 * 7168 * 2048;
constexpr double kRouter = 1835264;
constexpr double kRecompute = 37748736.0 + 16777216;       // MLA up-projections, rerun in B
constexpr double kQk = 128.0 * 192 * T * T;                // causal 2 x heads x d x T^2 / 2
constexpr double kPv = 128.0 * 128 * T * T;

double fwd_fp8() { return 2 * T * kDenseFp8 + 2 * R * kExpert; }

// The speed-of-light model, whose keys these are.
Plan capture(std::vector<std::string> sets) {
  sets.insert(sets.begin(), test::kSpeedOfLight);
  return load_plan(test::capture_yaml(), sets);
}

calib::PhaseMap simulate_capture(const Plan& plan) {
  SimOptions o;
  o.quiet = true;
  o.record_spans = true;
  return calib::capture_sim(plan, simulate(plan, o));
}

TEST(ProfileKeys, SpeedOfLightPhasesMatchTheHandCount) {
  const auto sol = calib::capture_sol(capture({}));
  EXPECT_NEAR(sol.phase_s.at("F"), fwd_fp8() / kFp8 + (kQk + kPv + 2 * T * kRouter) / kBf16, 1e-9);
  EXPECT_NEAR(sol.phase_s.at("B"),
              (fwd_fp8() + 2 * T * kRecompute) / kFp8 + (3 * kQk + 2 * kPv + 2 * T * kRouter) / kBf16, 1e-9);
  EXPECT_NEAR(sol.phase_s.at("W"), fwd_fp8() / kFp8 + 2 * T * kRouter / kBf16, 1e-9);
  // Dispatch: FP8 + one FP32 scale per 128 channels; combine: BF16; 3.5 remote nodes per token
  // over a 50 GB/s NIC (the seed's uniform model).
  const double comm = T * 3.5 * ((7168 + 7168 / 128 * 4) + 7168 * 2) / 50e9;
  EXPECT_NEAR(sol.phase_s.at("comm_F"), comm, 1e-9);
  EXPECT_NEAR(sol.phase_s.at("comm_B"), comm, 1e-9);
}

TEST(ProfileKeys, EfficienciesScaleComputeByTheirFactor) {
  const Plan p = capture({"hardware.comm_sms=0", "hardware.gemm_efficiency=0.5", "hardware.wgrad_gemm_efficiency=0.25",
                          "hardware.bf16_gemm_efficiency=0.5", "hardware.attention_efficiency=0.4"});
  const auto sim = simulate_capture(p);
  EXPECT_NEAR(sim.at("F"), fwd_fp8() / 0.5 / kFp8 + ((kQk + kPv) / 0.4 + 2 * T * kRouter / 0.5) / kBf16, 1e-7);
  EXPECT_NEAR(sim.at("B"),
              (fwd_fp8() + 2 * T * kRecompute) / 0.5 / kFp8 + ((3 * kQk + 2 * kPv) / 0.4 + 2 * T * kRouter / 0.5) / kBf16,
              1e-7);
  EXPECT_NEAR(sim.at("W"), fwd_fp8() / 0.25 / kFp8 + 2 * T * kRouter / 0.5 / kBf16, 1e-7);
}

TEST(ProfileKeys, AllToAllEfficiencyAndHandshakes) {
  const Plan p = capture({"hardware.comm_sms=0", "hardware.a2a_efficiency=0.5", "hardware.a2a_latency_s=0.001",
                          "hardware.a2a_layout_latency_s=0.002"});
  const auto sim = simulate_capture(p);
  const double xfer = T * 3.5 * ((7168 + 7168 / 128 * 4) + 7168 * 2) / 50e9;  // dispatch + combine
  EXPECT_NEAR(sim.at("comm_B"), xfer / 0.5 + 2 * 0.001, 0.01 * sim.at("comm_B"));
  EXPECT_NEAR(sim.at("comm_F"), xfer / 0.5 + 2 * 0.001 + 0.002, 0.01 * sim.at("comm_F"));
}

TEST(ProfileKeys, NonMatmulSplitsAThirdForwardTwoThirdsBackward) {
  const double n = 1e-6;  // s per token-layer
  const auto sim = simulate_capture(capture({"hardware.comm_sms=0", "hardware.nonmatmul_s_per_token_layer=1e-6"}));
  const auto sol = calib::capture_sol(capture({}));
  EXPECT_NEAR(sim.at("F") - sol.phase_s.at("F"), n * T / 3, 1e-7);
  EXPECT_NEAR(sim.at("B") - sol.phase_s.at("B"), n * T * 2 / 3, 1e-7);
  EXPECT_NEAR(sim.at("W"), sol.phase_s.at("W"), 1e-7);
}

}  // namespace
}  // namespace stepsim
