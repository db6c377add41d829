// software.fused.grouped_mlp (Transformer Engine's fused grouped MLP, ops/fused/grouped_mlp.py, which
// Megatron-Core's --use-transformer-engine-op-fuser runs with NVTE_CUTEDSL_FUSED_GROUPED_MLP=1): the
// experts' SwiGLU runs in the first grouped GEMM's epilogue, which writes its input (c_tensor, saved
// for the backward) and its output, quantised row- and column-wise for the second GEMM (d_tensor,
// d_col_tensor); its gradient runs in the second GEMM's dgrad epilogue, which reads the saved input and
// writes the first GEMM's output gradient, quantised both ways (d_row_tensor, d_col_tensor). Checked by
// hand on the shipped Qwen3-30B-A3B GB300 row QW-X-039 (hidden 2048, expert width 768, SwiGLU, MXFP8).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "vocabulary/config_error.hpp"
#include "workloads/layers/layer_work.hpp"
#include "tests/workloads/layer_work_sums.hpp"

namespace stepsim {
namespace {

constexpr double kExpertWidth = 768;
// MXFP8 written for both GEMMs that read a tensor: a row-wise and a column-wise copy, each a byte per
// value and an E8M0 scale per 32.
constexpr double kMxfp8BothCopies = 2 * (1 + 1.0 / 32);
constexpr double kBf16 = 2;

const std::string kQwen = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/QW-X-039.yaml";

Plan plan(bool fused, std::vector<std::string> more = {}) {
  std::vector<std::string> s = {"software.fused.grouped_mlp=" + std::string(fused ? "true" : "false")};
  s.insert(s.end(), more.begin(), more.end());
  return load_plan(kQwen, s);
}

constexpr auto op = test::memory_op;

double row_bytes(const PartWork& part) {
  double b = 0;
  for (const MemoryOp& m : part.memory) b += m.bytes_per_row;
  return b;
}

LayerWork work(const Plan& p) { return layer_work(p, 0, 1.0, 4096.0 * 8); }

TEST(FusedGroupedMlp, TheActivationAndItsCastsRunInTheGemmsEpilogues) {
  const LayerWork on = work(plan(true)), off = work(plan(false));
  const PartWork &f_on = on.part(LayerPart::MlpF), &f_off = off.part(LayerPart::MlpF);
  const PartWork &b_on = on.part(LayerPart::MlpB), &b_off = off.part(LayerPart::MlpB);
  // Unfused: the activation kernel and the second GEMM's input cast; the activation's backward and
  // the first GEMM's output gradient cast.
  for (const char* name : {"expert_activation", "expert_quantise_fc2"}) {
    EXPECT_NE(op(f_off, name), nullptr) << name;
    EXPECT_EQ(op(f_on, name), nullptr) << name;
  }
  for (const char* name : {"expert_activation_bwd", "expert_quantise_grads_fc1"}) {
    EXPECT_NE(op(b_off, name), nullptr) << name;
    EXPECT_EQ(op(b_on, name), nullptr) << name;
  }
  // What the epilogues still move, per routed row, with no kernel of their own. Forward: the
  // activation's output, quantised both ways (768 values). Backward: the saved gate and up read in
  // BF16 (1536 values), their gradient written quantised both ways.
  const MemoryOp* fwd = op(f_on, "expert_glu_epilogue");
  const MemoryOp* bwd = op(b_on, "expert_glu_epilogue_bwd");
  ASSERT_NE(fwd, nullptr);
  ASSERT_NE(bwd, nullptr);
  EXPECT_DOUBLE_EQ(fwd->bytes_per_row, kMxfp8BothCopies * kExpertWidth);  // 1584
  EXPECT_DOUBLE_EQ(bwd->bytes_per_row, (kBf16 + kMxfp8BothCopies) * 2 * kExpertWidth);  // 6240
  EXPECT_EQ(fwd->kernels, 0);
  EXPECT_EQ(bwd->kernels, 0);
  // What goes: forward, SwiGLU's 2 x 768 BF16 read and 768 written (6 x 768 bytes) and the cast's
  // read and both copies (4.0625 x 768), against the epilogue's 1584; backward, the activation's
  // gradient (dy, gate and up read, two gradients written: 10 x 768) and the cast of 1536 values
  // (4.0625 x 1536), against the epilogue's 6240.
  const double forward_saved = 6 * kExpertWidth + (kBf16 + kMxfp8BothCopies) * kExpertWidth - 1584;
  const double backward_saved = 10 * kExpertWidth + (kBf16 + kMxfp8BothCopies) * 2 * kExpertWidth - 6240;
  EXPECT_DOUBLE_EQ(row_bytes(f_off) - row_bytes(f_on), forward_saved);  // 6144: 8 x 768
  EXPECT_DOUBLE_EQ(row_bytes(b_off) - row_bytes(b_on), backward_saved);  // 7680: 10 x 768
  // The attention's parts and the per-token bytes of the MLP do not move.
  EXPECT_DOUBLE_EQ(row_bytes(on.part(LayerPart::AttnF)), row_bytes(off.part(LayerPart::AttnF)));
  EXPECT_EQ(op(f_on, "expert_quantise")->bytes_per_row, op(f_off, "expert_quantise")->bytes_per_row);
}

TEST(FusedGroupedMlp, InNvfp4TheEpiloguesWriteBf16AndTheCastsStay) {
  // NVFP4's fused path writes the activation (and its gradient) in BF16 and quantises it after
  // (grouped_mlp.py: use_nvfp4, _group_quantize_for_grouped_mlp), so only the activation kernels go.
  const LayerWork on = work(plan(true, {"train.precision=nvfp4"}));
  const LayerWork off = work(plan(false, {"train.precision=nvfp4"}));
  EXPECT_EQ(op(on.part(LayerPart::MlpF), "expert_activation"), nullptr);
  EXPECT_EQ(op(on.part(LayerPart::MlpB), "expert_activation_bwd"), nullptr);
  ASSERT_NE(op(on.part(LayerPart::MlpF), "expert_quantise_fc2"), nullptr);
  ASSERT_NE(op(on.part(LayerPart::MlpB), "expert_quantise_grads_fc1"), nullptr);
  EXPECT_DOUBLE_EQ(op(on.part(LayerPart::MlpF), "expert_quantise_fc2")->bytes_per_row,
                   op(off.part(LayerPart::MlpF), "expert_quantise_fc2")->bytes_per_row);
  EXPECT_DOUBLE_EQ(op(on.part(LayerPart::MlpF), "expert_glu_epilogue")->bytes_per_row, kBf16 * kExpertWidth);
  EXPECT_DOUBLE_EQ(op(on.part(LayerPart::MlpB), "expert_glu_epilogue_bwd")->bytes_per_row,
                   (kBf16 + kBf16) * 2 * kExpertWidth);
}

TEST(FusedGroupedMlp, OnlyWhereTransformerEngineAndMegatronRunIt) {
  const auto refused = [](std::vector<std::string> sets, std::string_view why) {
    sets.push_back("software.fused.grouped_mlp=true");
    try {
      load_plan(kQwen, sets);
      ADD_FAILURE() << "accepted: " << why;
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("software.fused.grouped_mlp"), std::string::npos) << msg;
      EXPECT_NE(msg.find(why), std::string::npos) << msg;
    }
  };
  refused({"train.precision=bf16", "train.fp8_attention=false"}, "MXFP8 or NVFP4");
  refused({"train.precision=fp8"}, "MXFP8 or NVFP4");
  refused({"software.grouped_gemm_per_expert=true"}, "one grouped kernel");
  refused({"parallel.moe_grouped_gemm=false"}, "grouped GEMMs");
  refused({"parallel.recompute=[moe_act]"}, "moe_act");
  const std::string dense = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/L3-X-036.yaml";
  try {
    load_plan(dense, {"software.fused.grouped_mlp=true"});
    ADD_FAILURE() << "a dense model accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("routed experts"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stepsim
