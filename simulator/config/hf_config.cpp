#include "simulator/config/hf_config.hpp"

#include <filesystem>
#include <fstream>

#include "simulator/config/config_error.hpp"
#include "simulator/io/input_file.hpp"

namespace stepsim {

nlohmann::json read_hf_model_keys(const std::string& path,
                                  const std::map<std::string, int64_t ModelConfig::*>& known_int_keys) {
  const std::string text =
      io::read_input_file(path, "model.config_json", 4 * io::kMiB);
  nlohmann::json hf;
  try {
    // A config.json is flat; deep nesting is malformed (and would recurse in the parser).
    hf = nlohmann::json::parse(text, [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > 64) throw ConfigError("nested more than 64 levels deep");
      return true;
    });
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(path + ": not valid JSON (" + std::string(e.what()) + "); fix the file");
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what() + "; a Hugging Face config.json is a flat object of settings");
  }
  if (!hf.is_object()) throw ConfigError(path + ": expected a JSON object of model settings");

  static const std::map<std::string, std::string> aliases = {
      {"num_local_experts", "n_routed_experts"}, {"num_experts", "n_routed_experts"}};
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : hf.items()) {
    const auto alias = aliases.find(key);
    const std::string name = alias != aliases.end() ? alias->second : key;
    if (!known_int_keys.count(name) && name != "tie_word_embeddings") continue;
    if (name == "tie_word_embeddings") {
      out[name] = value.is_boolean() ? value.get<bool>() : false;
      continue;
    }
    out[name] = value.is_null() ? nlohmann::json(0) : value;
  }
  // Mixtral-style configs give the experts' width as intermediate_size and have no dense layers.
  if (out.contains("n_routed_experts") && !out.contains("moe_intermediate_size") && out.contains("intermediate_size"))
    out["moe_intermediate_size"] = out["intermediate_size"];
  if (hf.contains("_name_or_path") && hf["_name_or_path"].is_string()) out["name"] = hf["_name_or_path"];
  else if (hf.contains("model_type") && hf["model_type"].is_string()) out["name"] = hf["model_type"];
  return out;
}

}  // namespace stepsim
