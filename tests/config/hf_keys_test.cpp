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

// Sliding windows as transformers reads them (the layers each config style switches on, by hand).
TEST(HfKeys, SlidingWindowsAreReadAsTransformersReadsThem) {
  const std::vector<int64_t> every = {0, 1, 2, 3, 4, 5, 6, 7};
  // Mistral: a window alone turns it on in every layer.
  Plan p = load_model_json(qwen_moe_json(R"("sliding_window": 4096)"));
  EXPECT_EQ(p.model.sliding_window, 4096);
  EXPECT_EQ(p.model.sliding_layers, every);
  // Qwen: use_sliding_window true, from max_window_layers on; false (as Qwen2-57B-A14B ships) or a
  // null window is full attention.
  p = load_model_json(qwen_moe_json(R"("sliding_window": 4096, "use_sliding_window": true, "max_window_layers": 5)"));
  EXPECT_EQ(p.model.sliding_layers, (std::vector<int64_t>{5, 6, 7}));
  EXPECT_EQ(p.model.attention_window(4), 0);
  EXPECT_EQ(p.model.attention_window(5), 4096);
  EXPECT_EQ(load_model_json(qwen_moe_json(R"("sliding_window": 4096, "use_sliding_window": false)")).model.sliding_window, 0);
  EXPECT_EQ(load_model_json(qwen_moe_json(R"("sliding_window": null)")).model.sliding_window, 0);
  rejection(qwen_moe_json(R"("sliding_window": 4096, "use_sliding_window": true)"), {"max_window_layers", "28"});
  // layer_types (GPT-OSS, Gemma 3): each layer's kind, the window from sliding_window.
  p = load_model_json(qwen_moe_json(R"("sliding_window": 128, "layer_types": ["sliding_attention", "full_attention",
      "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention"])"));
  EXPECT_EQ(p.model.sliding_layers, (std::vector<int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(p.model.attention_window(6), 128);
  EXPECT_EQ(p.model.attention_window(7), 0);
  rejection(qwen_moe_json(R"("sliding_window": 128, "layer_types": ["full_attention", "sliding_attention"])"),
            {"layer_types", "lists 2 layers", "num_hidden_layers is 8"});
  rejection(qwen_moe_json(R"("layer_types": ["sliding_attention", "full_attention", "full_attention", "full_attention",
      "full_attention", "full_attention", "full_attention", "full_attention"])"), {"sliding_window", "not given"});
  rejection(qwen_moe_json(R"("sliding_window": 128, "layer_types": ["chunked_attention", "full_attention",
      "full_attention", "full_attention", "full_attention", "full_attention", "full_attention", "full_attention"])"),
            {"layer_types", "chunked_attention", "not supported"});
  // A window over a billion layers: refused for the layer count, at once (not listed first).
  rejection(qwen_moe_json(R"("num_hidden_layers": 1000000000, "sliding_window": 4096)"), {"num_hidden_layers", "4096"});
  for (const char* bad : {"0", "-4096", "\"4096\"", "1.5"})
    rejection(qwen_moe_json(std::string(R"("sliding_window": )") + bad), {"sliding_window", "positive whole number"});
  rejection(qwen_moe_json(R"("attention_bias": 1)"), {"attention_bias", "true or false"});
  rejection(qwen_moe_json(R"("tie_word_embeddings": "yes")"), {"tie_word_embeddings", "true or false"});
}

TEST(HfKeys, SlidingWindowKeysInYamlAreCheckedAgainstThePlan) {
  // The default plan (DeepSeek-V3, 61 layers).
  expect_default_rejects({"model.sliding_layers=[0, 2]"}, {"model.sliding_layers", "model.sliding_window"});
  expect_default_rejects({"model.sliding_window=4096", "model.sliding_layers=[3, 61]"},
                         {"model.sliding_layers", "layer 61", "61 layers"});
  expect_default_rejects({"model.sliding_window=4096", "model.sliding_layers=[3, 3]"}, {"model.sliding_layers", "ascending"});
  expect_default_rejects({"model.sliding_window=4096", "model.sliding_layers=[]"}, {"model.sliding_layers"});
  expect_default_rejects({"model.sliding_window=-1"}, {"model.sliding_window"});
  expect_default_rejects({"model.sliding_window=4096", "parallel.cp=2"}, {"parallel.cp", "sliding-window", "use cp 1"});
}

// Hugging Face booleans are JSON booleans: 1, 0 or "true" are type errors, not read as false (a
// sliding window switched on with `1` ran full attention).
TEST(HfKeys, BooleansMustBeBooleans) {
  for (const char* spelling : {"1", "0", "\"true\"", "\"false\"", "[]", "{}", "1.0"}) {
    rejection(qwen_moe_json(std::string(R"("sliding_window": 4096, "use_sliding_window": )") + spelling),
              {"use_sliding_window: expected true or false, got", "fix the file"});
    rejection(qwen_moe_json(std::string(R"("attention_bias": )") + spelling), {"attention_bias: expected true or false"});
    rejection(qwen_moe_json(std::string(R"("mlp_bias": )") + spelling), {"mlp_bias: expected true or false"});
    rejection(qwen_moe_json(std::string(R"("tie_word_embeddings": )") + spelling),
              {"tie_word_embeddings: expected true or false"});
  }
  // null is absent, as transformers writes it.
  EXPECT_EQ(load_model_json(qwen_moe_json(R"("attention_bias": null, "use_sliding_window": null)")).model.hidden_size, 1024);
}

// Two names of one setting that disagree are refused (Mixtral's num_local_experts and DeepSeek's
// n_routed_experts once ran with 8 of 16); names of other families that stepsim does not read are
// refused when they would stand alone (num_kv_heads alone would plan multi-head attention).
TEST(HfKeys, ConflictingOrUnreadSynonymsAreRefused) {
  rejection(qwen_moe_json(R"("num_local_experts": 8, "n_routed_experts": 16)"),
            {"num_local_experts: 8 disagrees with n_routed_experts: 16", "keep one"});
  rejection(qwen_moe_json(R"("num_experts": 8, "n_routed_experts": 16)"),
            {"num_experts: 8 disagrees with n_routed_experts: 16", "two names of one setting"});
  // Equal names are one setting.
  EXPECT_EQ(load_model_json(qwen_moe_json(R"("num_local_experts": 8, "n_routed_experts": 8)")).model.n_routed_experts, 8);
  rejection(qwen_moe_json(R"("num_key_value_heads": null, "num_kv_heads": 2)"),
            {"num_kv_heads: stepsim reads this setting as num_key_value_heads", "rename it"});
  rejection(qwen_moe_json(R"("num_key_value_heads": 4, "n_head_kv": 2)"), {"n_head_kv: 2 disagrees with num_key_value_heads: 4"});
  rejection(qwen_moe_json(R"("n_embd": 2048)"), {"n_embd: 2048 disagrees with hidden_size: 1024"});
  rejection(qwen_moe_json(R"("moe_top_k": 4)"), {"moe_top_k: 4 disagrees with num_experts_per_tok: 2"});
  EXPECT_EQ(load_model_json(qwen_moe_json(R"("n_embd": 1024)")).model.hidden_size, 1024);
  // A value of a synonym is checked under the name the file gives it.
  rejection(qwen_moe_json(R"("num_experts": -8)"), {"num_experts: must not be negative"});
}

// Llama 4 puts an MoE layer every interleave_moe_layer_step layers and attends in chunks; a
// multimodal config nests the text model. None of these is modelled: each is refused by name.
TEST(HfKeys, Llama4LayoutsAreRefusedNotCountedAsEveryLayerMoe) {
  rejection(qwen_moe_json(R"("interleave_moe_layer_step": 2)"), {"interleave_moe_layer_step", "set it to 1"});
  rejection(qwen_moe_json(R"("expert_layer_period": 2)"), {"expert_layer_period"});
  rejection(qwen_moe_json(R"("attention_chunk_size": 8192)"), {"attention_chunk_size", "chunked local attention"});
  rejection(R"({"model_type": "llama4", "text_config": {"hidden_size": 5120}})", {"text_config", "multimodal"});
  EXPECT_EQ(load_model_json(qwen_moe_json(R"("interleave_moe_layer_step": 1)")).model.moe_layers(), 8);
}

// save_pretrained writes the checkpoint's local path as _name_or_path: a long one names the model
// by its last component (cut further if still long), never refused, and no message blames `name`.
TEST(HfKeys, LongNameOrPathIsShortenedNotRefused) {
  const std::string dir(300, 'd');
  Plan p = load_model_json(qwen_moe_json("\"_name_or_path\": \"/checkpoints/" + dir + "/qwen-moe-step1000\""));
  EXPECT_EQ(p.model.name, "qwen-moe-step1000");
  p = load_model_json(qwen_moe_json("\"_name_or_path\": \"" + std::string(400, 'x') + "\""));
  EXPECT_LE(p.model.name.size(), 256u);
  EXPECT_EQ(p.model.name.substr(0, 10), "xxxxxxxxxx");
  p = load_model_json(qwen_moe_json(R"("_name_or_path": "org/model\u001b[31m")"));
  EXPECT_EQ(p.model.name, "org/model?[31m");  // no control characters reach the terminal
}

TEST(HfKeys, BiasesAreCountedNotRefused) {
  // Qwen-MoE test model: hidden 1024, 16 heads of 64 (multi-head here), 4 KV heads.
  const Plan none = load_model_json(qwen_moe_json(""));
  const Plan with = load_model_json(qwen_moe_json(R"("attention_bias": true, "mlp_bias": true)"));
  const auto a = count_params(with.model), b = count_params(none.model);
  // One bias per output of q, k, v and the output projection.
  const int64_t kv = none.model.num_key_value_heads > 0 ? none.model.num_key_value_heads : none.model.num_attention_heads;
  EXPECT_EQ(a.attention.bias, 16 * 64 + 2 * kv * 64 + 1024);
  EXPECT_EQ(b.attention.bias, 0);
  EXPECT_GT(a.expert, b.expert);
}

TEST(HfKeys, HiddenActDecidesGatedOrNot) {
  EXPECT_TRUE(load_model_json(qwen_moe_json(R"("hidden_act": "silu")")).model.gated_mlp());
  for (const char* act : {"gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "relu", "relu2"})
    EXPECT_FALSE(load_model_json(qwen_moe_json(R"("hidden_act": ")" + std::string(act) + R"(")")).model.gated_mlp())
        << act;
  rejection(qwen_moe_json(R"("hidden_act": "swiglu_2")"), {"hidden_act", "swiglu_2", "silu"});
  rejection(qwen_moe_json(R"("rotary_pct": 1.5)"), {"rotary_pct", "1.5"});
}

TEST(HfKeys, GptNeoXHasBiasesAndLayerNorm) {
  TempFile json("config.json", R"({"model_type": "gpt_neox", "hidden_size": 512, "num_hidden_layers": 6,
    "num_attention_heads": 8, "intermediate_size": 2048, "vocab_size": 50304, "hidden_act": "gelu",
    "rotary_pct": 0.25, "layer_norm_eps": 1e-5, "tie_word_embeddings": false, "use_parallel_residual": true})");
  const Plan p = load_plan_from_string(config_with_model(json.path()), "cfg.yaml", {});
  EXPECT_TRUE(p.model.attention_bias);
  EXPECT_TRUE(p.model.mlp_bias);
  EXPECT_EQ(p.model.norm, Norm::LayerNorm);
  EXPECT_DOUBLE_EQ(p.model.rotary_pct, 0.25);
  // Pythia-70M's card: 18,915,328 non-embedding parameters (6 x (12 x 512^2 + 13 x 512) + 2 x 512).
  const auto c = count_params(p.model);
  EXPECT_EQ(c.total() - c.embedding - c.lm_head, 18'915'328);
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
  // Qwen3's attention normalises each query and key head (HF has no key: the model class does it).
  EXPECT_TRUE(p.model.qk_norm);
}

TEST(HfKeys, QkNormFollowsTheModelFamily) {
  const std::string shape = R"("hidden_size": 512, "num_hidden_layers": 8, "num_attention_heads": 8,
    "intermediate_size": 1024, "vocab_size": 1000)";
  const auto qk_norm = [&](const std::string& type) {
    TempFile json("config.json", "{\"model_type\": \"" + type + "\", " + shape + "}");
    return load_plan_from_string(config_with_model(json.path()), "cfg.yaml", {}).model.qk_norm;
  };
  EXPECT_TRUE(qk_norm("qwen3"));
  EXPECT_TRUE(qk_norm("olmo2"));
  EXPECT_FALSE(qk_norm("llama"));
  EXPECT_FALSE(qk_norm("qwen2"));
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
  expect_default_rejects({"train.precision=bf16", "parallel.fp8_stash=true"}, {"parallel.fp8_stash", "set parallel.fp8_stash=false"});
  // Nothing to gather in FP8 without FP8 GEMMs.
  expect_default_rejects({"train.precision=bf16", "parallel.fp8_stash=false", "parallel.fp8_param_gather=true"},
                         {"parallel.fp8_param_gather", "train.precision is bf16", "set parallel.fp8_param_gather=false"});
  // FP8 attention: per-tensor FP8 (delayed or tensorwise) or MXFP8, on a GPU with a published rate.
  expect_default_rejects({"train.fp8_attention=true"}, {"train.fp8_attention", "train.fp8_recipe is blockwise"});
  expect_default_rejects({"train.precision=bf16", "parallel.fp8_stash=false", "train.fp8_attention=true"},
                         {"train.fp8_attention", "train.precision is bf16", "train.precision=mxfp8"});
  expect_default_rejects({"train.fp8_recipe=tensorwise", "train.fp8_attention=true", "sim.compute=predicted"},
                         {"hardware.attention_fp8_fwd_tflops", "no published rate", "train.fp8_attention=false"});
  EXPECT_TRUE(load_plan(default_yaml(), {"train.fp8_recipe=tensorwise", "train.fp8_attention=true", "sim.compute=predicted",
                                         "hardware.preset=gb200"})
                  .train.fp8_attention);
  expect_default_rejects({"train.reported_step_s=0"}, {"train.reported_step_s", "greater than zero"});
  expect_default_rejects({"train.reported_step_s=fast"}, {"train.reported_step_s", "number"});
  expect_default_rejects({"hardware.peak_bf16_tflops=-989"}, {"hardware.peak_bf16_tflops", "greater than zero"});
  expect_default_rejects({"hardware.peak_fp8_tflops=0"}, {"hardware.peak_fp8_tflops", "greater than zero"});
  expect_default_rejects({"parallel.recompute=most"}, {"parallel.recompute", "selective"});
}

}  // namespace
}  // namespace stepsim::test
