// Hugging Face keys that change FLOPs or bytes: read when stepsim models them, refused with one
// line naming the file, the key and the fix when it does not. Never silently ignored.
#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include "config_test_util.hpp"
#include "vocabulary/model_params.hpp"

namespace stepsim::test {
namespace {

// A small Qwen2-MoE-style config.json; `extra` adds or overrides keys (JSON members).
// A small Qwen-MoE config.json; `extra` ("key": value, ...) adds keys or replaces the base's (a key
// may appear only once in the file).
std::string qwen_moe_json(const std::string& extra) {
  nlohmann::json j = nlohmann::json::parse(R"({"model_type": "qwen2_moe", "hidden_size": 1024,
    "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 4, "intermediate_size": 4096,
    "moe_intermediate_size": 512, "num_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000,
    "tie_word_embeddings": false})");
  j.update(nlohmann::json::parse("{" + extra + "}"));
  return j.dump();
}

// The Llama 3.1 8B plan (64 GPUs, 1F1B over 4 stages) with its model replaced by `json_path`.
std::string config_with_model(const std::string& json_path) {
  const std::string text = read_text(source_path("workloads/llama-3.1-8b.yaml"));
  return "model:\n  config_json: " + json_path + "\n" + text.substr(text.find("\ntrain:"));
}

Plan load_model_json(const std::string& json_text) {
  TempFile json("config.json", json_text);
  return load_plan_from_string(config_with_model(json.path()), "cfg.yaml", {"parallel.ep=8"});
}

std::string rejection(const std::string& json_text, std::initializer_list<std::string> pieces) {
  TempFile json("config.json", json_text);
  const auto msg = config_error_of([&] { load_plan_from_string(config_with_model(json.path()), "cfg.yaml", {"parallel.ep=8"}); });
  expect_message(msg, pieces);
  EXPECT_NE(msg.find("config.json"), std::string::npos) << "names the file: " << msg;
  return msg;
}

TEST(HfKeys, ZeroKeyValueHeadsIsAnErrorNotAbsent) {
  rejection(qwen_moe_json(R"("num_key_value_heads": 0)"), {"num_key_value_heads", "0", "num_attention_heads"});
  // In YAML too: 0 is not a way to say "as many as the heads".
  expect_default_rejects({"model.num_key_value_heads=0"}, {"model.num_key_value_heads", "positive"});
  expect_default_rejects({"model.head_dim=0"}, {"model.head_dim", "positive"});
}

TEST(HfKeys, NullKeyValueHeadsMeansMultiHeadAttention) {
  const Plan p = load_model_json(qwen_moe_json(R"("num_key_value_heads": null, "head_dim": null)"));
  // K and V as wide as Q: 1024 -> 16 x 64 each.
  EXPECT_EQ(count_params(p.model).attention.kv_up, 1024 * 2 * 1024);
}

TEST(HfKeys, InterleavedDenseLayersAreRefused) {
  rejection(qwen_moe_json(R"("decoder_sparse_step": 2)"), {"decoder_sparse_step", "set it to 1"});
  rejection(qwen_moe_json(R"("moe_layer_freq": 2)"), {"moe_layer_freq", "set it to 1"});
  rejection(qwen_moe_json(R"("mlp_only_layers": [3, 5])"), {"mlp_only_layers", "[0, 1, ..., k-1]"});
  // Step 1 and an empty list are the modelled layout.
  const Plan p = load_model_json(qwen_moe_json(R"("decoder_sparse_step": 1, "mlp_only_layers": [])"));
  EXPECT_EQ(p.model.moe_layers(), 8);
}

TEST(HfKeys, LeadingMlpOnlyLayersAreDenseLayers) {
  const Plan p = load_model_json(qwen_moe_json(R"("mlp_only_layers": [0, 1])"));
  EXPECT_EQ(p.model.first_k_dense_replace, 2);
  EXPECT_EQ(p.model.moe_layers(), 6);
  EXPECT_FALSE(p.model.is_moe_layer(1));
  EXPECT_TRUE(p.model.is_moe_layer(2));
  // Dense layers use intermediate_size: 3 x 1024 x 4096 each.
  EXPECT_EQ(count_params(p.model).dense_ffn, 3 * 1024 * 4096);
  rejection(qwen_moe_json(R"("mlp_only_layers": [0, 1], "first_k_dense_replace": 3)"),
            {"mlp_only_layers", "first_k_dense_replace"});
}

TEST(HfKeys, SharedExpertWidthCounts) {
  const Plan p = load_model_json(qwen_moe_json(R"("shared_expert_intermediate_size": 2048)"));
  EXPECT_EQ(count_params(p.model).shared_experts, 3 * 1024 * 2048);
}

TEST(HfKeys, SlidingWindowBiasesAndOtherLayerTypesAreRefused) {
  // Mistral: a window turns sliding-window attention on.
  rejection(qwen_moe_json(R"("sliding_window": 4096)"), {"sliding_window", "set sliding_window to null"});
  // Qwen: only with use_sliding_window true; false (as Qwen2-57B-A14B ships) is full attention.
  rejection(qwen_moe_json(R"("sliding_window": 4096, "use_sliding_window": true)"),
            {"use_sliding_window", "set use_sliding_window to false"});
  EXPECT_EQ(load_model_json(qwen_moe_json(R"("sliding_window": 4096, "use_sliding_window": false)")).model.hidden_size,
            1024);
  rejection(qwen_moe_json(R"("attention_bias": true)"), {"attention_bias", "set it to false"});
  rejection(qwen_moe_json(R"("mlp_bias": true)"), {"mlp_bias", "set it to false"});
  rejection(qwen_moe_json(R"("layer_types": ["full_attention", "sliding_attention"])"),
            {"layer_types", "sliding_attention"});
  rejection(qwen_moe_json(R"("tie_word_embeddings": "yes")"), {"tie_word_embeddings", "true or false"});
}

TEST(HfKeys, Qwen3MoeHeadDimWiderThanHiddenOverHeads) {
  // Qwen3-MoE: 32 heads of 128 on a 2048-wide model; no shared expert.
  const Plan p = load_model_json(R"({"model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 4,
    "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144,
    "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1,
    "mlp_only_layers": [], "vocab_size": 151936, "tie_word_embeddings": false, "attention_bias": false,
    "sliding_window": null, "use_sliding_window": false})");
  const auto a = count_params(p.model).attention;
  EXPECT_EQ(a.q_up, 2048 * 32 * 128);
  EXPECT_EQ(a.kv_up, 2048 * 4 * 2 * 128);
  EXPECT_EQ(a.out, 32 * 128 * 2048);
}

TEST(HfKeys, MtpDepthIsRead) {
  const Plan p = load_plan(source_path("workloads/deepseek-v3-from-hf.yaml"));
  EXPECT_EQ(p.model.num_nextn_predict_layers, 1);
  EXPECT_TRUE(is_deepseek_v3(p.model));
}

TEST(TrainKeys, PrecisionDefaultsAndBadValues) {
  // DeepSeek (MLA) configs default to FP8 with FP8 stashes, others to BF16 with BF16 stashes.
  const Plan ds = load_plan(default_yaml());
  EXPECT_EQ(ds.train.precision, Precision::FP8);
  EXPECT_TRUE(ds.parallel.fp8_stash);
  const Plan llama = load_plan(source_path("workloads/llama-3.1-8b.yaml"));
  EXPECT_EQ(llama.train.precision, Precision::BF16);
  EXPECT_FALSE(llama.parallel.fp8_stash);
  EXPECT_EQ(load_plan(default_yaml(), {"train.precision=bf16", "parallel.fp8_stash=false"}).train.precision,
            Precision::BF16);
  expect_default_rejects({"train.precision=fp16"}, {"train.precision", "fp8, bf16"});
  // BF16 GEMMs have no FP8 copies to stash.
  expect_default_rejects({"train.precision=bf16", "parallel.fp8_stash=true"}, {"parallel.fp8_stash", "set it to false"});
  expect_default_rejects({"train.reported_step_s=0"}, {"train.reported_step_s", "greater than zero"});
  expect_default_rejects({"train.reported_step_s=fast"}, {"train.reported_step_s", "number"});
  expect_default_rejects({"hardware.peak_bf16_tflops=-989"}, {"hardware.peak_bf16_tflops", "greater than zero"});
  expect_default_rejects({"hardware.peak_fp8_tflops=0"}, {"hardware.peak_fp8_tflops", "greater than zero"});
  expect_default_rejects({"parallel.recompute=most"}, {"parallel.recompute", "selective"});
}

}  // namespace
}  // namespace stepsim::test
