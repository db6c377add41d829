// Layers per pipeline stage as Megatron-LM and torchtitan place them (workloads/layers/framework_split.hpp). Every
// expected list is counted by hand from the flags, following the frameworks' rules: Megatron's
// stage c x PP + r is rank r's virtual stage c; NeMo's account_for_embedding/loss count the
// embedding and the loss as one layer each; torchtitan counts the embedding and the head as
// first / last_stage_less_layers layers and gives the first (layers + both) % stages one more.
#include <gtest/gtest.h>

#include "workloads/layers/framework_split.hpp"

namespace stepsim {
namespace {

using V = std::vector<int64_t>;

V repeat(int64_t value, int64_t times) { return V(size_t(times), value); }
V cat(std::initializer_list<V> parts) {
  V out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const SplitError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(PipelineSplit, MegatronEvenSplitsWithVirtualStages) {
  // 80 layers over PP 4 with 5 layers per virtual stage: 4 stages per rank of 5 (every rank 20).
  EXPECT_EQ(megatron_even_split(80, 4, 4, false, false), repeat(5, 16));
  EXPECT_EQ(megatron_even_split(32, 4, 1, false, false), repeat(8, 4));
  // Qwen3-235B-A22B's 94 layers over PP 8 x VP 4 with the embedding and loss counted: 96 / 32 = 3
  // per stage, the first and the last stage one fewer.
  EXPECT_EQ(megatron_even_split(94, 8, 4, true, true), cat({{2}, repeat(3, 30), {2}}));
  // Llama 3.1 405B (NeMo): 126 + 2 over PP 16 = 8 per rank; with VP 8, 1 per stage, the first and
  // the last stage none.
  EXPECT_EQ(megatron_even_split(126, 16, 8, true, true), cat({{0}, repeat(1, 126), {0}}));
  EXPECT_EQ(megatron_even_split(63, 8, 1, true, false), cat({{7}, repeat(8, 7)}));
  // Megatron-LM refuses 9 layers over PP 2, and 20 per rank over 3 virtual stages.
  EXPECT_NE(refusal([] { megatron_even_split(9, 2, 1, false, false); }).find("do not split evenly over the 2 pipeline ranks"),
            std::string::npos);
  EXPECT_NE(refusal([] { megatron_even_split(80, 4, 3, false, false); }).find("over its 3 virtual stages"), std::string::npos);
  // 6 layers + 2 over PP 8: one each; the embedding and the loss fill the first and last stage.
  EXPECT_EQ(megatron_even_split(6, 8, 1, true, true), cat({{0}, repeat(1, 6), {0}}));
}

TEST(PipelineSplit, MegatronUnevenFirstAndLastStages) {
  // 94 layers, PP 8, first rank 10, last 12: (94 - 22) / 6 = 12 on each middle rank.
  EXPECT_EQ(megatron_uneven_split(94, 8, 1, 10, 12), cat({{10}, repeat(12, 7)}));
  // DeepSeek-V3's 61 layers, PP 16, first rank 1 (with the embedding): 60 / 15 = 4 on the others.
  EXPECT_EQ(megatron_uneven_split(61, 16, 1, 1, 0), cat({{1}, repeat(4, 15)}));
  // With virtual stages each rank's layers split over them: 40 layers, PP 4, VP 2, first 6, last 10
  // leave 24 / 2 = 12 per middle rank; stages (rank 0..3) x 2: 3 6 6 5 | 3 6 6 5.
  EXPECT_EQ(megatron_uneven_split(40, 4, 2, 6, 10), (V{3, 6, 6, 5, 3, 6, 6, 5}));
  EXPECT_NE(refusal([] { megatron_uneven_split(94, 8, 4, 10, 12); }).find("10 layers of the first pipeline rank"),
            std::string::npos);
  EXPECT_NE(refusal([] { megatron_uneven_split(94, 8, 1, 8, 0); }).find("86 layers left for the 7 middle"), std::string::npos);
  EXPECT_NE(refusal([] { megatron_uneven_split(8, 2, 1, 4, 3); }).find("1 layers are left for 0 middle"), std::string::npos);
  EXPECT_NE(refusal([] { megatron_uneven_split(8, 1, 1, 8, 0); }).find("needs pipeline parallelism"), std::string::npos);
}

TEST(PipelineSplit, MegatronLayoutStrings) {
  // DeepSeek-V3 at PP 16 (Megatron's own example): E + 3 layers, 29 stages of 2, an MTP stage, a
  // loss stage: 32 stages (VP 2), 3 + 58 = 61 layers.
  EXPECT_EQ(megatron_layout_split("Et*3|(tt|)*29,m|L", 16, 61, 1), cat({{3}, repeat(2, 29), {0, 0}}));
  // At PP 8 with four virtual stages: E + 1 layer, 30 stages of 2, the last with MTP and loss only.
  EXPECT_EQ(megatron_layout_split("Et|(tt|)*30mL", 8, 61, 1), cat({{1}, repeat(2, 30), {0}}));
  // The brief's: E + 4, 14 stages of 4, then 1 layer with MTP and loss: 16 stages, 61 layers.
  EXPECT_EQ(megatron_layout_split("Et*4|(t*4|)*14tmL", 8, 61, 1), cat({{4}, repeat(4, 14), {1}}));
  EXPECT_EQ(megatron_layout_split("Ett|tt|tt|ttL", 4, 8, 0), repeat(2, 4));
  EXPECT_NE(refusal([] { megatron_layout_split("Ett|tL", 2, 4, 0); }).find("places 3 decoder layers"), std::string::npos);
  EXPECT_NE(refusal([] { megatron_layout_split("tE|L", 2, 1, 0); }).find("start with the embedding"), std::string::npos);
  EXPECT_NE(refusal([] { megatron_layout_split("Ex|L", 2, 0, 0); }).find("\"x\""), std::string::npos);
  EXPECT_NE(refusal([] { megatron_layout_split("Et|t|tL", 2, 3, 0); }).find("3 stages, not a multiple of the 2"),
            std::string::npos);
  EXPECT_NE(refusal([] { megatron_layout_split("Etm|tL", 2, 2, 1); }).find("after an MTP layer"), std::string::npos);
  EXPECT_NE(refusal([] { megatron_layout_split("E(t)*99999999|L", 2, 1, 0); }).find("9,999,999"), std::string::npos);
  EXPECT_NE(refusal([] { megatron_layout_split("E(tttttttttt)*9999999|L", 2, 1, 0); }).find("million"), std::string::npos);
}

TEST(PipelineSplit, TorchtitanCountsTheEmbeddingAndHeadAsLayers) {
  // Llama 3 8B, 4 stages: (32 + 1 + 1) / 4 = 8 rest 2: 9 - 1, 9, 8, 8 - 1.
  EXPECT_EQ(torchtitan_split(4, 32, 1, 1), (V{8, 9, 8, 7}));
  // 405B's 126 layers over 32 stages (4 per stage): 3, 4 x 30, 3.
  EXPECT_EQ(torchtitan_split(32, 126, 1, 1), cat({{3}, repeat(4, 30), {3}}));
  EXPECT_EQ(torchtitan_split(2, 6, 0, 0), (V{3, 3}));
  EXPECT_EQ(torchtitan_split(1, 6, 1, 1), (V{6}));
  EXPECT_NE(refusal([] { torchtitan_split(40, 32, 1, 1); }).find("40 stages exceed the 34 effective layers"), std::string::npos);
  EXPECT_NE(refusal([] { torchtitan_split(16, 32, 3, 1); }).find("first stage's weight (3) exceeds the 2 layers"),
            std::string::npos);
}

}  // namespace
}  // namespace stepsim
