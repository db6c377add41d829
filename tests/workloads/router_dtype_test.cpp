// parallel.moe_router_dtype fp32 (Megatron-LM's --moe-router-dtype fp32, Megatron-Core's
// RouterGatingLinearFunction): the forward is unchanged (BF16 operands, FP32 logits); the backward
// casts the saved input and the weight to FP32, runs its input- and weight-gradient GEMMs on FP32
// operands (Transformer Engine: TF32, half the BF16 tensor rate on the datasheets) and casts the
// gradients back. Checked on the shipped DeepSeek-V3 check on 1024 H100 (TP 2: 2,048 tokens a GPU).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "vocabulary/config_error.hpp"
#include "workloads/cost/part_cost.hpp"
#include "workloads/layers/layer_work.hpp"
#include "tests/workloads/host_bound_parts.hpp"

namespace stepsim {
namespace {

constexpr double kHidden = 7168, kExperts = 256;  // DeepSeek-V3's config.json
constexpr int64_t kMoeLayer = 5;                   // its first three layers are dense

const std::string kDsv3 = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/checks/DSV3-H100-1024-FP8.yaml";

Plan plan(const std::string& dtype, std::vector<std::string> sets = {}) {
  sets.push_back("parallel.moe_router_dtype=" + dtype);
  return load_plan(kDsv3, sets);
}

cost::ClassSeconds seconds(const Plan& p, LayerPart part) {
  const cost::MicrobatchShape shape = cost::mean_microbatch_shape(p);
  const LayerWork w = layer_work(p, kMoeLayer, p.sequences_per_microbatch(), shape.routed_rows);
  return cost::part_seconds(p, w.part(part), shape).all();
}

double tokens_per_gpu(const Plan& p) {  // sequence parallelism: the router sees 1/TP of the tokens
  return double(p.train.seq_len) * double(p.parallel.micro_batch_size) / double(p.parallel.tp);
}

TEST(RouterDtype, Fp32RunsTheBackwardsGemmsAtHalfTheBf16Rate) {
  // GEMMs at the preset's rate (no cost classes): the router's GEMM is 2 x tokens x experts x hidden
  // FLOPs each pass; at half the rate each backward pass takes that much longer again.
  Plan bf16 = plan("bf16"), fp32 = plan("fp32");
  bf16.sim.cost_classes = fp32.sim.cost_classes = 0;
  const double once = 2 * tokens_per_gpu(bf16) * kExperts * kHidden / (bf16.hardware.gemm_tflops(Precision::BF16) * 1e12);
  EXPECT_NEAR(seconds(fp32, LayerPart::AttnF).gemm, seconds(bf16, LayerPart::AttnF).gemm, 1e-15);
  EXPECT_NEAR(seconds(fp32, LayerPart::AttnB).gemm - seconds(bf16, LayerPart::AttnB).gemm, once, 1e-12);
  EXPECT_NEAR(seconds(fp32, LayerPart::AttnW).gemm - seconds(bf16, LayerPart::AttnW).gemm, once, 1e-12);
  EXPECT_GT(once, 5e-6);  // 2,048 x 256 x 7,168 x 2 = 7.5 GFLOP: about 10 microseconds, not nothing
}

TEST(RouterDtype, Fp32CastsAroundTheBackward) {
  // Host-bound kernels: the backward gains four casts (the input and the weight to FP32, the two
  // gradients back), and 12 bytes a hidden value of each token (2 read + 4 written, 4 read + 2
  // written); the forward nothing.
  const Plan bf16 = plan("bf16", host_bound::sets()), fp32 = plan("fp32", host_bound::sets());
  const auto b = host_bound::part_time(bf16, LayerPart::AttnB, kMoeLayer);
  const auto f = host_bound::part_time(fp32, LayerPart::AttnB, kMoeLayer);
  EXPECT_NEAR(f.memory_s - b.memory_s, 12 * kHidden * tokens_per_gpu(bf16) / host_bound::hbm_bytes_per_s(bf16), 1e-12);
  EXPECT_NEAR(f.kernels_s - b.kernels_s, 4 * host_bound::kHost, 1e-9);
  const auto bf = host_bound::part_time(bf16, LayerPart::AttnF, kMoeLayer);
  const auto ff = host_bound::part_time(fp32, LayerPart::AttnF, kMoeLayer);
  EXPECT_NEAR(ff.kernels_s, bf.kernels_s, 1e-12);
  EXPECT_NEAR(ff.memory_s, bf.memory_s, 1e-15);
}

TEST(RouterDtype, DenseModelsAndOtherDtypesAreRefused) {
  const std::string dense = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";
  try {
    load_plan(dense, {"parallel.moe_router_dtype=fp32"});
    FAIL() << "a dense model took a router dtype";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("parallel.moe_router_dtype"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("MoE"), std::string::npos) << e.what();
  }
  try {
    plan("fp64");
    FAIL() << "fp64 was taken";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("parallel.moe_router_dtype"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fp32"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stepsim
