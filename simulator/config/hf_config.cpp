#include "simulator/config/hf_config.hpp"

#include <filesystem>
#include <fstream>

#include "vocabulary/config_error.hpp"
#include "simulator/io/input_file.hpp"
#include "simulator/io/strict_json.hpp"

namespace stepsim {

namespace {

using nlohmann::json;

bool given(const json& hf, const char* key) { return hf.contains(key) && !hf[key].is_null(); }

// Keys whose non-default values change FLOPs or bytes in ways stepsim does not model.
void refuse_unmodelled(const std::string& path, const json& hf) {
  const auto fail = [&](const std::string& key, const std::string& what) {
    throw ConfigError(path + ": " + key + ": " + what);
  };
  // DeepSeek's moe_layer_freq, Qwen-MoE's decoder_sparse_step: an MoE layer every n layers.
  for (const char* key : {"moe_layer_freq", "decoder_sparse_step"})
    if (given(hf, key) && !(hf[key].is_number_integer() && hf[key].get<int64_t>() == 1))
      fail(key, hf[key].dump() + ": dense layers between MoE layers are not modelled (every layer from "
                                  "first_k_dense_replace on is MoE); set it to 1 in the file");
  for (const char* key : {"attention_bias", "mlp_bias"})
    if (given(hf, key) && hf[key] != json(false))
      fail(key, hf[key].dump() + ": bias vectors are not modelled (a few parameters per layer, no matmul FLOPs); "
                                  "set it to false in the file to plan without them");
  // Mistral: sliding_window alone turns it on; Qwen2: only with use_sliding_window true.
  const bool window_on = !hf.contains("use_sliding_window") || hf["use_sliding_window"] == json(true);
  if (given(hf, "sliding_window") && window_on)
    fail(hf.contains("use_sliding_window") ? "use_sliding_window" : "sliding_window",
         "sliding-window attention is not modelled (the attention core is counted over the whole causal "
         "sequence); set " + std::string(hf.contains("use_sliding_window") ? "use_sliding_window to false" : "sliding_window to null") +
             " in the file for full attention");
  if (given(hf, "layer_types")) {
    const json& types = hf["layer_types"];
    if (!types.is_array()) fail("layer_types", "expected a list of layer types");
    for (const auto& t : types)
      if (t != json("full_attention"))
        fail("layer_types", t.dump() + ": only full_attention layers are modelled; this architecture is not supported");
  }
}

// Qwen-MoE's mlp_only_layers: a leading run [0, 1, ..., k-1] is DeepSeek's first_k_dense_replace k.
int64_t leading_dense_layers(const std::string& path, const json& hf) {
  if (!given(hf, "mlp_only_layers")) return 0;
  const json& layers = hf["mlp_only_layers"];
  const auto fail = [&] {
    throw ConfigError(path + ": mlp_only_layers: " + layers.dump() +
                      ": only a leading run of dense layers [0, 1, ..., k-1] is modelled (dense layers between MoE "
                      "layers are not); change the list in the file");
  };
  if (!layers.is_array()) fail();
  for (size_t i = 0; i < layers.size(); ++i)
    if (!layers[i].is_number_integer() || layers[i].get<int64_t>() != int64_t(i)) fail();
  return int64_t(layers.size());
}

}  // namespace

nlohmann::json read_hf_model_keys(const std::string& path,
                                  const std::map<std::string, int64_t ModelConfig::*>& known_int_keys) {
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

  static const std::map<std::string, std::string> aliases = {
      {"num_local_experts", "n_routed_experts"}, {"num_experts", "n_routed_experts"}};
  json out = json::object();
  for (const auto& [key, value] : hf.items()) {
    const auto alias = aliases.find(key);
    const std::string name = alias != aliases.end() ? alias->second : key;
    if (!known_int_keys.count(name) && name != "tie_word_embeddings") continue;
    if (name == "tie_word_embeddings") {
      if (!value.is_null() && !value.is_boolean())
        throw ConfigError(path + ": tie_word_embeddings: expected true or false, got " + value.dump() + "; fix the file");
      out[name] = value.is_boolean() && value.get<bool>();
      continue;
    }
    // Not given: as many key-value heads as heads, head_dim = hidden / heads. A 0 is a mistake.
    if (value.is_null() && (name == "num_key_value_heads" || name == "head_dim")) continue;
    if (name == "num_key_value_heads" && value == json(0))
      throw ConfigError(path + ": num_key_value_heads: 0 is not a head count; give the key-value heads "
                               "(num_attention_heads for multi-head attention) or null");
    out[name] = value.is_null() ? json(0) : value;
  }
  if (const int64_t dense = leading_dense_layers(path, hf); dense > 0) {
    if (out.contains("first_k_dense_replace") && out["first_k_dense_replace"] != json(dense))
      throw ConfigError(path + ": mlp_only_layers: " + std::to_string(dense) +
                        " leading dense layers disagree with first_k_dense_replace; keep one of the two");
    out["first_k_dense_replace"] = dense;
  }
  // Mixtral-style configs give the experts' width as intermediate_size and have no dense layers.
  if (out.contains("n_routed_experts") && !out.contains("moe_intermediate_size") && out.contains("intermediate_size"))
    out["moe_intermediate_size"] = out["intermediate_size"];
  if (hf.contains("_name_or_path") && hf["_name_or_path"].is_string()) out["name"] = hf["_name_or_path"];
  else if (hf.contains("model_type") && hf["model_type"].is_string()) out["name"] = hf["model_type"];
  return out;
}

}  // namespace stepsim
