#include "simulator/config/hf_config.hpp"

#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "vocabulary/config_error.hpp"
#include "simulator/io/input_file.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/io/strict_json.hpp"

namespace stepsim {

namespace {

using nlohmann::json;

bool given(const json& hf, const char* key) { return hf.contains(key) && !hf[key].is_null(); }

std::string shown(const json& v) { return io::shortened(io::json_text(v), 80); }

// A Hugging Face boolean as transformers writes it: true, false, or null / absent (nullopt).
// 1, 0, "true" are type errors, not read as false: a window or a bias switched on must not
// silently turn into the plain layer.
std::optional<bool> hf_bool(const std::string& path, const json& hf, const char* key) {
  if (!given(hf, key)) return std::nullopt;
  if (!hf[key].is_boolean())
    throw ConfigError(path + ": " + key + ": expected true or false, got " + shown(hf[key]) + "; fix the file");
  return hf[key].get<bool>();
}

// One setting, several names: stepsim's (the Llama / DeepSeek name) and what other model families
// call it. `read`: the family is one stepsim models, so the name is read as stepsim's (Mixtral's
// num_local_experts, Qwen-MoE's num_experts); otherwise the name is refused when stepsim's is
// absent (it would be dropped: num_kv_heads alone would plan multi-head attention). Two names of
// one setting that disagree are refused either way.
struct Synonym {
  const char* key;
  const char* name;
  bool read;
};
constexpr Synonym kSynonyms[] = {
    {"n_routed_experts", "num_local_experts", true},   {"n_routed_experts", "num_experts", true},
    {"n_routed_experts", "moe_num_experts", false},    {"num_experts_per_tok", "moe_top_k", false},
    {"num_experts_per_tok", "moe_topk", false},        {"num_experts_per_tok", "num_experts_per_token", false},
    {"n_shared_experts", "num_shared_experts", false}, {"num_key_value_heads", "num_kv_heads", false},
    {"num_key_value_heads", "n_head_kv", false},       {"num_key_value_heads", "multi_query_group_num", false},
    {"num_key_value_heads", "num_query_groups", false}, {"hidden_size", "n_embd", false},
    {"hidden_size", "d_model", false},                 {"num_hidden_layers", "n_layer", false},
    {"num_hidden_layers", "num_layers", false},        {"num_attention_heads", "n_head", false},
    {"num_attention_heads", "num_heads", false},       {"intermediate_size", "n_inner", false},
    {"intermediate_size", "ffn_hidden_size", false},   {"vocab_size", "padded_vocab_size", false},
    {"head_dim", "kv_channels", false},
};

// Keys whose non-default values change FLOPs or bytes in ways stepsim does not model.
void refuse_unmodelled(const std::string& path, const json& hf) {
  const auto fail = [&](const std::string& key, const std::string& what) {
    throw ConfigError(path + ": " + key + ": " + what);
  };
  // A multimodal config (Llama 4, Qwen2-VL) nests its language model's settings.
  for (const char* key : {"text_config", "language_config", "llm_config"})
    if (given(hf, key) && hf[key].is_object())
      fail(key, "a multimodal config: its language model's settings are nested here; give stepsim a config.json "
                "holding the text model's settings at the top level");
  // DeepSeek's moe_layer_freq, Qwen-MoE's decoder_sparse_step, Llama 4's interleave_moe_layer_step,
  // Jamba's expert_layer_period: an MoE layer every n layers.
  for (const char* key : {"moe_layer_freq", "decoder_sparse_step", "interleave_moe_layer_step", "expert_layer_period"})
    if (given(hf, key) && !(hf[key].is_number_integer() && hf[key].get<int64_t>() == 1))
      fail(key, shown(hf[key]) + ": dense layers between MoE layers are not modelled (every layer from "
                                 "first_k_dense_replace on is MoE); set it to 1 in the file");
  // Llama 4's chunked local attention: a window by another name.
  if (given(hf, "attention_chunk_size"))
    fail("attention_chunk_size", "chunked local attention is not modelled (the attention core is counted over the "
                                 "whole causal sequence); set it to null in the file for full attention");
}

// Sliding-window attention as transformers reads it into `out` (sliding_window, sliding_layers):
// layer_types names each layer's kind (GPT-OSS, Gemma 3); without it, Qwen's use_sliding_window
// turns the window on for the layers from max_window_layers on, Mistral's sliding_window alone for
// every layer. use_sliding_window false (as Qwen ships) is full attention whatever the window says.
void read_sliding_window(const std::string& path, const json& hf, json& out) {
  const auto fail = [&](const std::string& key, const std::string& what) {
    throw ConfigError(path + ": " + key + ": " + what);
  };
  const std::optional<bool> use_window = hf_bool(path, hf, "use_sliding_window");
  const bool window_given = given(hf, "sliding_window");
  if (window_given && !(hf["sliding_window"].is_number_integer() && hf["sliding_window"].get<int64_t>() > 0))
    fail("sliding_window", shown(hf["sliding_window"]) + ": expected a positive whole number of tokens, or null; fix the file");
  const bool on = window_given && use_window.value_or(true);
  const int64_t layers = given(hf, "num_hidden_layers") && hf["num_hidden_layers"].is_number_integer()
                             ? hf["num_hidden_layers"].get<int64_t>()
                             : 0;
  // More layers than a model may have is refused with num_hidden_layers itself; listing them here
  // first would only cost time and memory.
  if (layers > kMaxLayers) return;
  std::vector<int64_t> sliding;
  if (given(hf, "layer_types")) {
    const json& types = hf["layer_types"];
    if (!types.is_array()) fail("layer_types", "expected a list of layer types, got " + shown(types) + "; fix the file");
    if (layers > 0 && int64_t(types.size()) != layers)
      fail("layer_types", "lists " + std::to_string(types.size()) + " layers where num_hidden_layers is " +
                              std::to_string(layers) + "; give one type per layer");
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i] == json("sliding_attention")) {
        sliding.push_back(int64_t(i));
      } else if (types[i] != json("full_attention")) {
        fail("layer_types", shown(types[i]) + ": only full_attention and sliding_attention layers are modelled; "
                                              "this architecture is not supported");
      }
    }
    if (!sliding.empty() && !on)
      fail(window_given ? "use_sliding_window" : "sliding_window",
           "layer_types names sliding_attention layers but the window is " +
               std::string(window_given ? "switched off" : "not given") + "; give sliding_window (and use_sliding_window true)");
  } else if (on && use_window.has_value()) {  // Qwen: the layers from max_window_layers on
    if (!given(hf, "max_window_layers") || !hf["max_window_layers"].is_number_integer() ||
        hf["max_window_layers"].get<int64_t>() < 0)
      fail("max_window_layers", "use_sliding_window is true: give the first layer to use the window (transformers' "
                                "default 28 is not assumed), a whole number");
    for (int64_t i = hf["max_window_layers"].get<int64_t>(); i < layers; ++i) sliding.push_back(i);
  } else if (on) {  // Mistral: every layer
    for (int64_t i = 0; i < layers; ++i) sliding.push_back(i);
  }
  if (sliding.empty()) return;  // no layer uses it: full attention
  out["sliding_window"] = hf["sliding_window"];
  out["sliding_layers"] = sliding;
}

// Qwen-MoE's mlp_only_layers: a leading run [0, 1, ..., k-1] is DeepSeek's first_k_dense_replace k.
int64_t leading_dense_layers(const std::string& path, const json& hf) {
  if (!given(hf, "mlp_only_layers")) return 0;
  const json& layers = hf["mlp_only_layers"];
  const auto fail = [&] {
    throw ConfigError(path + ": mlp_only_layers: " + shown(layers) +
                      ": only a leading run of dense layers [0, 1, ..., k-1] is modelled (dense layers between MoE "
                      "layers are not); change the list in the file");
  };
  if (!layers.is_array()) fail();
  for (size_t i = 0; i < layers.size(); ++i)
    if (!layers[i].is_number_integer() || layers[i].get<int64_t>() != int64_t(i)) fail();
  return int64_t(layers.size());
}

// A report name from the file: its _name_or_path (what save_pretrained writes: often a long local
// path) or model_type. Never refused: too long, it keeps the last path component, then the start
// cut on a character boundary; control characters become '?'.
std::string derived_name(std::string s) {
  for (char& c : s)
    if ((static_cast<unsigned char>(c) < 0x20) || c == 0x7f) c = '?';
  constexpr size_t kMax = 256;  // model.name's limit
  while (s.size() > kMax && !s.empty() && s.back() == '/') s.pop_back();
  if (s.size() > kMax) {
    const size_t slash = s.find_last_of('/');
    if (slash != std::string::npos && s.size() - slash - 1 > 0) s = s.substr(slash + 1);
  }
  return s.size() > kMax ? io::shortened(s, kMax) : s;
}

}  // namespace

nlohmann::json read_hf_model_keys(const std::string& path,
                                  const std::map<std::string, int64_t ModelConfig::*>& known_int_keys,
                                  std::map<std::string, std::string>* spelled) {
  const std::string text =
      io::read_input_file(path, "model.config_json", 4 * io::kMiB);
  nlohmann::json hf;
  try {
    // A config.json is flat; deep nesting is malformed (and would recurse in the parser).
    hf = io::parse_json_strictly(text, 64);
  } catch (const nlohmann::json::exception& e) {  // parse errors and number overflow (1e3068)
    throw ConfigError(path + ": not valid JSON (" + std::string(e.what()) + "); fix the file");
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what() + " (a Hugging Face config.json is a flat object of settings)");
  }
  if (!hf.is_object()) throw ConfigError(path + ": expected a JSON object of model settings");
  refuse_unmodelled(path, hf);

  std::map<std::string, std::string> names;  // stepsim's key -> the file's name for it
  const auto note_name = [&](const std::string& key, const std::string& name) {
    names[key] = name;
    if (spelled != nullptr) (*spelled)[key] = name;
  };
  // Every name of a setting the file gives must agree; names stepsim does not read must not stand alone.
  for (const Synonym& s : kSynonyms) {
    if (!given(hf, s.name)) continue;
    const std::string other = names.count(s.key) ? names[s.key] : std::string(s.key);
    if (given(hf, other.c_str()) && hf[other] != hf[s.name])
      throw ConfigError(path + ": " + s.name + ": " + shown(hf[s.name]) + " disagrees with " + other + ": " +
                        shown(hf[other]) + " (two names of one setting); keep one");
    if (!s.read && !given(hf, s.key))
      throw ConfigError(path + ": " + s.name + ": stepsim reads this setting as " + s.key +
                        " (the Llama / DeepSeek name); rename it in the file, else it would be ignored");
    if (s.read && !given(hf, s.key)) note_name(s.key, s.name);
  }

  json out = json::object();
  for (const auto& [key, value] : hf.items()) {
    std::string name = key;
    for (const Synonym& s : kSynonyms)
      if (s.read && key == s.name) name = s.key;
    if (name != key && names.count(name) && names[name] != key) continue;  // an equal second name
    if (name == "tie_word_embeddings" || name == "attention_bias" || name == "mlp_bias") {
      out[name] = hf_bool(path, hf, key.c_str()).value_or(false);
      continue;
    }
    // The activation (its name decides gated or not), its clamp (GPT-OSS) and GPT-NeoX's share of rotary dimensions go
    // through the YAML keys' checks; a LayerNorm's epsilon says the layers use LayerNorm.
    if (name == "hidden_act" || name == "rotary_pct" || name == "swiglu_limit") {
      if (!value.is_null()) out[name] = value;
      continue;
    }
    if (name == "layer_norm_eps" || name == "layer_norm_epsilon") {
      out["norm"] = "layernorm";
      continue;
    }
    if (name == "sliding_window" || !known_int_keys.count(name)) continue;  // the window: read_sliding_window
    // Not given: as many key-value heads as heads, head_dim = hidden / heads. A 0 is a mistake.
    if (value.is_null() && (name == "num_key_value_heads" || name == "head_dim")) continue;
    if (name == "num_key_value_heads" && value == json(0))
      throw ConfigError(path + ": num_key_value_heads: 0 is not a head count; give the key-value heads "
                               "(num_attention_heads for multi-head attention) or null");
    out[name] = value.is_null() ? json(0) : value;
  }
  read_sliding_window(path, hf, out);
  if (const int64_t dense = leading_dense_layers(path, hf); dense > 0) {
    if (out.contains("first_k_dense_replace") && out["first_k_dense_replace"] != json(dense))
      throw ConfigError(path + ": mlp_only_layers: " + std::to_string(dense) +
                        " leading dense layers disagree with first_k_dense_replace; keep one of the two");
    out["first_k_dense_replace"] = dense;
    note_name("first_k_dense_replace", "mlp_only_layers");
  }
  // GPT-NeoX (Pythia, GPT-NeoX-20B): every projection and MLP matrix has a bias (HF's
  // GPTNeoXConfig defaults attention_bias to true and its MLP always has one), LayerNorm layers.
  if (hf.contains("model_type") && hf["model_type"] == json("gpt_neox")) {
    if (!out.contains("attention_bias")) out["attention_bias"] = true;
    out["mlp_bias"] = true;
    out["norm"] = "layernorm";
  }
  // GPT-OSS: every expert matrix has a bias (HF's GptOssExperts; the file has no key for it).
  if (hf.contains("model_type") && hf["model_type"] == json("gpt_oss") && !out.contains("mlp_bias")) out["mlp_bias"] = true;
  // Families whose attention normalises each query and key head (HF has no key for it: the model
  // class does it): Qwen3 and its MoE, OLMo 2, Gemma 3.
  if (hf.contains("model_type") && hf["model_type"].is_string()) {
    const std::string type = hf["model_type"].get<std::string>();
    if (type == "qwen3" || type == "qwen3_moe" || type == "olmo2" || type == "gemma3_text" || type == "gemma3")
      out["qk_norm"] = true;
  }
  // Mixtral-style configs give the experts' width as intermediate_size and have no dense layers.
  if (out.contains("n_routed_experts") && !out.contains("moe_intermediate_size") && out.contains("intermediate_size")) {
    out["moe_intermediate_size"] = out["intermediate_size"];
    note_name("moe_intermediate_size", "intermediate_size");
  }
  for (const char* key : {"_name_or_path", "model_type"})
    if (given(hf, key) && hf[key].is_string() && !hf[key].get_ref<const std::string&>().empty()) {
      out["name"] = derived_name(hf[key].get<std::string>());
      note_name("name", key);
      break;
    }
  return out;
}

}  // namespace stepsim
