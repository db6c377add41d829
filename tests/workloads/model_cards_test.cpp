// Each shipped Hugging Face config.json, read as-is, must give the parameter counts its model card
// publishes. stepsim's "activated" is N of 6ND: the parameters a token's matmuls use (shared and
// top-k routed experts, the LM head; the embedding is a lookup, not a matmul). DeepSeek's cards
// quote that; Mistral's count the embedding row a token reads too, so theirs is compared with
// activated + embedding.
#include <gtest/gtest.h>

#include <string>

#include "simulator/config/config_loader.hpp"
#include "vocabulary/model_params.hpp"

namespace stepsim {
namespace {

ModelConfig shipped_model(const std::string& file) {
  // The default plan with only the model swapped (EP 1 suits every expert count); a path given
  // with --set is relative to the working directory, so this one is absolute.
  return load_plan(default_config_path(), {"model.config_json=" + std::string(STEPSIM_SOURCE_DIR) + "/workloads/models/" + file, "parallel.ep=1",
                    "parallel.split_lone_chunks=false"}).model;  // no all-to-all at EP 1
}

void expect_within_1_percent(double ours, double published, const char* what) {
  EXPECT_NEAR(ours / published, 1.0, 0.01) << what << ": ours " << ours / 1e9 << " B vs published "
                                           << published / 1e9 << " B";
}

TEST(ModelCards, Pythia14bGptNeoX) {
  // huggingface.co/EleutherAI/pythia-1.4b, model card table "Non-Embedding Params": 1,208,602,624
  // (24 layers of 12 h^2 matrices with their biases, 13 h, and LayerNorms, plus the final LayerNorm);
  // with the untied input and output embeddings (2 x 50304 x 2048) the 1,414,647,808 of the card's
  // name table. A non-gated GELU MLP: two matrices of hidden x intermediate.
  const ModelConfig m = shipped_model("pythia-1.4b.config.json");
  EXPECT_FALSE(m.gated_mlp());
  EXPECT_EQ(m.norm, Norm::LayerNorm);
  EXPECT_DOUBLE_EQ(m.rotary_pct, 0.25);
  const auto p = count_params(m);
  EXPECT_EQ(p.total() - p.embedding - p.lm_head, 1'208'602'624);
  EXPECT_EQ(p.total(), 1'414'647'808);
  EXPECT_EQ(p.dense_ffn, 2 * 2048 * 8192 + 8192 + 2048);
}

TEST(ModelCards, MegatronGpt177b) {
  // FACTS.md section 8: Megatron-Core's 177B GPT is 12 x 96 x 12288^2 + 2 x 131072 x 12288 (MHA,
  // a GELU MLP of 4 x hidden, untied embeddings; the norms' 96 x 4 x 12288 + 2 x 12288 weights on top).
  const Plan p = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/megatron/gpt-177b.yaml");
  const auto c = count_params(p.model);
  const double matrices = 12.0 * 96 * 12288.0 * 12288 + 2.0 * 131072 * 12288;
  const double norms = 96 * 4 * 12288.0 + 2 * 12288.0;
  EXPECT_EQ(double(c.total()), matrices + norms);
}

TEST(ModelCards, Llama31_8b) {
  const auto p = count_params(shipped_model("llama-3.1-8b.config.json"));
  // huggingface.co/meta-llama/Llama-3.1-8B: "Model size 8.03B params" (safetensors).
  expect_within_1_percent(double(p.total()), 8.03e9, "total");
  EXPECT_EQ(p.activated() + p.embedding, p.total());
}

TEST(ModelCards, Llama31_70b) {
  const auto p = count_params(shipped_model("llama-3.1-70b.config.json"));
  // huggingface.co/meta-llama/Llama-3.1-70B: "Model size 70.6B params" (safetensors); dense, so
  // every parameter but the embedding lookup is activated.
  expect_within_1_percent(double(p.total()), 70.6e9, "total");
  EXPECT_EQ(p.activated() + p.embedding, p.total());
  EXPECT_EQ(p.routed_experts_total(), 0);
}

TEST(ModelCards, Llama31_405b) {
  const auto p = count_params(shipped_model("llama-3.1-405b.config.json"));
  // huggingface.co/meta-llama/Llama-3.1-405B: "Model size 406B params" (safetensors).
  expect_within_1_percent(double(p.total()), 406e9, "total");
  EXPECT_EQ(p.activated() + p.embedding, p.total());
}

TEST(ModelCards, Mixtral8x22b) {
  const auto p = count_params(shipped_model("mixtral-8x22b.config.json"));
  // Mistral AI, "Cheaper, Better, Faster, Stronger" (Mixtral 8x22B announcement and model card):
  // "uses only 39B active parameters out of 141B".
  expect_within_1_percent(double(p.total()), 141e9, "total");
  expect_within_1_percent(double(p.activated() + p.embedding), 39e9, "active");
}

TEST(ModelCards, Mixtral8x7b) {
  const auto p = count_params(shipped_model("mixtral-8x7b.config.json"));
  // Mistral AI, "Mixtral of experts" announcement: "46.7B total parameters but only uses 12.9B
  // parameters per token".
  expect_within_1_percent(double(p.total()), 46.7e9, "total");
  expect_within_1_percent(double(p.activated() + p.embedding), 12.9e9, "active");
}

TEST(ModelCards, Qwen2_57bA14b) {
  const auto m = shipped_model("qwen2-57b-a14b.config.json");
  EXPECT_EQ(m.shared_expert_intermediate_size, 20480);
  const auto p = count_params(m);
  // Qwen2 release notes (qwenlm.github.io/blog/qwen2, model table): 57.41B parameters, 56.32B
  // without the embedding and LM head.
  expect_within_1_percent(double(p.total()), 57.41e9, "total");
  expect_within_1_percent(double(p.total() - p.embedding - p.lm_head), 56.32e9, "non-embedding");
  // The card gives the activated count only as "A14B" (whole billions): 13.5 B to 14.5 B. Without
  // the 20480-wide shared expert (28 x 3 x 3584 x 20480 = 6.17 B) it would read 7.5 B.
  EXPECT_GE(double(p.activated()), 13.5e9);
  EXPECT_LE(double(p.activated()), 14.5e9);
  // By hand: per layer attention 2 x 3584^2 + 2 x 3584 x 512, shared expert 3 x 3584 x 20480, eight
  // routed experts 8 x 3 x 3584 x 2560, router 64 x 3584 (+ 64: stepsim counts DeepSeek-V3's
  // balancing bias for every router), two norms; then the LM head and the final norm.
  const double layer = 2.0 * 3584 * 3584 + 2.0 * 3584 * 512 + 3.0 * 3584 * 20480 + 8 * 3.0 * 3584 * 2560 +
                       64.0 * 3584 + 64 + 2 * 3584;
  EXPECT_DOUBLE_EQ(double(p.activated()), 28 * layer + 151936.0 * 3584 + 3584);
}

TEST(ModelCards, Qwen3MoeModels) {
  // Qwen3 model cards (huggingface.co/Qwen/Qwen3-30B-A3B, Qwen3-235B-A22B): "Number of Parameters:
  // 30.5B in total and 3.3B activated", non-embedding 29.9B; "235B in total and 22B activated",
  // non-embedding 234B. Head dim 128 (heads x 128 differs from hidden), no shared expert.
  const auto small = count_params(shipped_model("qwen3-30b-a3b.config.json"));
  expect_within_1_percent(double(small.total()), 30.5e9, "30B total");
  expect_within_1_percent(double(small.total() - small.embedding - small.lm_head), 29.9e9, "30B non-embedding");
  // The card gives the activated count to one decimal (3.3B); the count is 3.353e9, so within the
  // rounding of that figure (3.25 .. 3.35) to 0.1 %.
  EXPECT_GE(double(small.activated() + small.embedding), 3.25e9);
  EXPECT_LE(double(small.activated() + small.embedding), 3.355e9);
  const auto large = count_params(shipped_model("qwen3-235b-a22b.config.json"));
  expect_within_1_percent(double(large.total()), 235e9, "235B total");
  expect_within_1_percent(double(large.total() - large.embedding - large.lm_head), 234e9, "235B non-embedding");
  expect_within_1_percent(double(large.activated() + large.embedding), 22e9, "235B activated");
}

TEST(ModelCards, GptOss120b) {
  // OpenAI's gpt-oss model card (arXiv 2508.10925, table 1): gpt-oss-120b has 116.83B parameters,
  // 5.13B active per token; 36 layers, every other one (from the first) attending through a
  // 128-token window (config.json layer_types and sliding_window).
  const auto m = shipped_model("gpt-oss-120b.config.json");
  const auto p = count_params(m);
  expect_within_1_percent(double(p.total()), 116.83e9, "total");
  expect_within_1_percent(double(p.activated()), 5.13e9, "activated");
  EXPECT_EQ(m.sliding_window, 128);
  ASSERT_EQ(m.sliding_layers.size(), 18u);
  EXPECT_EQ(m.sliding_layers.front(), 0);
  EXPECT_EQ(m.sliding_layers.back(), 34);
  EXPECT_EQ(m.attention_window(35), 0);
}

TEST(ModelCards, DeepSeekV2) {
  const auto m = shipped_model("deepseek-v2.config.json");
  EXPECT_EQ(m.moe_layers(), 59);
  const auto p = count_params(m);
  // huggingface.co/deepseek-ai/DeepSeek-V2 and the DeepSeek-V2 report (arXiv 2405.04434):
  // "236B total parameters, of which 21B are activated for each token".
  expect_within_1_percent(double(p.total()), 236e9, "total");
  expect_within_1_percent(double(p.activated()), 21e9, "activated");
}

TEST(ModelCards, DeepSeekV3) {
  const auto p = count_params(shipped_model("deepseek-v3.config.json"));
  // huggingface.co/deepseek-ai/DeepSeek-V3, README_WEIGHTS.md: 671B main-model parameters (the
  // 11.5B MTP module aside), 36.7B activated.
  expect_within_1_percent(double(p.total()), 671e9, "total");
  expect_within_1_percent(double(p.activated()), 36.7e9, "activated");
}

}  // namespace
}  // namespace stepsim
