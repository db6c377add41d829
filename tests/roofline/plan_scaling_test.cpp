// The roofline is a calculator for any plan: each test changes one input of the default plan and
// checks the outputs move as the closed forms say (derived here, not read from a previous run).
#include <gtest/gtest.h>

#include <cmath>

#include "simulator/config/config_loader.hpp"
#include "simulator/roofline/roofline.hpp"
#include "tests/roofline/roofline_of.hpp"

namespace stepsim {
namespace {

using test::kRel;
using test::roof;

TEST(PlanScaling, DoublingInfiniBandHalvesEveryIbTerm) {
  const auto a = roof(), b = roof({"hardware.ib_GBps=100"});
  EXPECT_NEAR(b.ep_comm_s, a.ep_comm_s / 2, kRel);
  EXPECT_NEAR(b.pp_comm_s, a.pp_comm_s / 2, kRel);
  EXPECT_NEAR(b.dp_comm_s, a.dp_comm_s / 2, kRel);
  EXPECT_DOUBLE_EQ(b.compute_s, a.compute_s);
}

TEST(PlanScaling, FasterGemmsShrinkComputeNotComm) {
  const auto a = roof(), b = roof({"hardware.fp8_tflops=2913.2", "hardware.bf16_tflops=1515.4"});
  EXPECT_NEAR(b.compute_s, a.compute_s / 2, kRel);
  EXPECT_DOUBLE_EQ(b.comm_s, a.comm_s);
  // Low precision makes the step comms bound: compute now falls below the IB terms.
  EXPECT_GT(b.exposed_comm_s, 0);
  EXPECT_NEAR(b.step_time_s, b.comm_s + b.bubble_s, kRel);
}

TEST(PlanScaling, HalfTheClusterDoublesPerGpuWork) {
  // 128 nodes: DP 128 per stage, 120 sequences per replica.
  const auto a = roof(), b = roof({"cluster.nodes=128", "parallel.microbatches=120"});
  EXPECT_NEAR(b.compute_s, 2 * a.compute_s, 1e-9 * a.compute_s);
  EXPECT_NEAR(b.ep_comm_s, 2 * a.ep_comm_s, 1e-9 * a.ep_comm_s);
  // Twice the microbatches, each the same size: pipeline sends double too.
  EXPECT_NEAR(b.pp_comm_s, 2 * a.pp_comm_s, kRel);
  // Bubble share (PP-1)/(3m) halves with m = 120.
  EXPECT_NEAR(b.bubble_s / b.compute_s, 7.0 / (3 * 120), kRel);
}

TEST(PlanScaling, LargerBatchScalesComputeAndEpButNotZero1) {
  const auto a = roof(), b = roof({"train.global_batch=30720", "parallel.microbatches=120"});
  EXPECT_NEAR(b.compute_s, 2 * a.compute_s, 1e-9 * a.compute_s);
  EXPECT_NEAR(b.ep_comm_s, 2 * a.ep_comm_s, 1e-9 * a.ep_comm_s);
  EXPECT_NEAR(b.dp_comm_s, a.dp_comm_s, kRel);  // ZeRO-1 moves parameters, not tokens
}

TEST(PlanScaling, LongerSequencesShiftFlopsToAttention) {
  // Same tokens per step, sequences twice as long: matmuls unchanged, attention core doubles.
  const auto a = roof(), b = roof({"train.seq_len=8192", "train.global_batch=7680", "parallel.microbatches=30"});
  EXPECT_NEAR(b.terms.matmul_fp8_s, a.terms.matmul_fp8_s, kRel);
  EXPECT_NEAR(b.terms.attention_s, 2 * a.terms.attention_s, 1e-9 * a.terms.attention_s);
  EXPECT_NEAR(b.terms.recompute_s, a.terms.recompute_s, kRel);
}

TEST(PlanScaling, ExpertGroupSizeSetsRemoteNodes) {
  // Uniform node choice: k = min(4 nodes, nodes in the EP group), remote = k (1 - 1/nodes).
  EXPECT_NEAR(roof({"parallel.ep=32"}).routing.remote_nodes, 4 * (1 - 1.0 / 4), kRel);
  EXPECT_NEAR(roof({"parallel.ep=16"}).routing.remote_nodes, 2 * (1 - 1.0 / 2), kRel);
  const auto single_node = roof({"parallel.ep=8"});
  EXPECT_DOUBLE_EQ(single_node.routing.remote_nodes, 0.0);
  // The all-to-all stays on NVLink, and costs NVLink time: each of the 7 other GPUs gets a copy of
  // a token with probability 1 - (7/8)^8, FP8 + scales there, BF16 back, forward and backward.
  EXPECT_DOUBLE_EQ(single_node.ep.ib_s, 0.0);
  const double visits = 15360.0 * 4096 * 58 / 2048, copies = 7 * (1 - std::pow(7.0 / 8, 8));
  const double bytes = 7168 + 7168 / 128.0 * 4 + 2 * 7168;
  EXPECT_NEAR(single_node.ep_comm_s, 2 * visits * copies * bytes / 160e9, 1e-9 * single_node.ep_comm_s);
  // EP 128 spans 16 nodes; each of the 8 groups covers 2 nodes, so 4 groups reach up to 8 nodes.
  EXPECT_NEAR(roof({"parallel.ep=128"}).routing.remote_nodes, 8 * (1 - 1.0 / 16), kRel);
}

TEST(PlanScaling, Zero1TrafficFollowsPpAndEp) {
  // PP 4 with 1F1B: a stage holds a quarter of the model; DP 512 = 64 nodes; EDP 8.
  const auto r = roof({"parallel.pp=4", "schedule=1f1b", "parallel.microbatches=30"});
  const double non_expert = double(r.params.non_expert_total()) / 4;
  const double experts = double(r.params.routed_experts_total()) / 4 / 64;
  const double ib_params = non_expert / 8 * (1 - 1.0 / 64) + experts * (1 - 1.0 / 8);
  EXPECT_NEAR(r.dp_comm_s, ib_params * (2 + 4) / 50e9, 1e-9);
  EXPECT_NEAR(r.bubble_s / r.compute_s, 3.0 / 30, kRel);
  // 1F1B sends one activation and one gradient per microbatch: 4096 x 7168 BF16 each.
  EXPECT_NEAR(r.pp_comm_s, 2.0 * 30 * 4096 * 7168 * 2 / 50e9, kRel);
}

TEST(PlanScaling, DenseModelHasNoExpertTraffic) {
  const auto r = roof({"model.n_routed_experts=0", "model.first_k_dense_replace=0", "parallel.ep=1",
                       "parallel.split_lone_chunks=false"});
  EXPECT_DOUBLE_EQ(r.ep_comm_s, 0.0);
  // 61 dense layers: N = 61 x (attention + norms + dense FFN) + final norm + head.
  const double attn = 7168.0 * 1536 + 7168.0 * 576 + 1536.0 * 128 * 192 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
  const double n = 61 * (attn + 2 * 7168.0 + 1536 + 512 + 3.0 * 7168 * 18432) + 7168 + 129280.0 * 7168;
  EXPECT_EQ(double(r.activated_params), n);
}

}  // namespace
}  // namespace stepsim
