// Reads the model keys stepsim knows from a Hugging Face config.json, as-is: keys with no effect
// on FLOPs or bytes (rope, dropout, token ids, ...) are ignored, null means "feature absent" (0;
// for num_key_value_heads and head_dim: not given), and common aliases (Mixtral's
// num_local_experts, Qwen's num_experts) map onto the DeepSeek names; names of one setting that
// disagree, other families' names stepsim does not read, and booleans that are not true, false or
// null are refused. An MoE config without
// moe_intermediate_size (Mixtral) takes intermediate_size as the experts' width; Qwen's leading
// mlp_only_layers become first_k_dense_replace. A key that would change the cost in a way stepsim
// does not model (interleaved dense layers, sliding-window attention, bias vectors, other layer
// types) is refused with one line naming the file, the key and the fix.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "vocabulary/plan.hpp"

namespace stepsim {

// `spelled` (optional) receives, for each key the file gives under another name, that name
// (n_routed_experts -> num_local_experts, name -> _name_or_path), so a message about a value names
// the key the file has.
nlohmann::json read_hf_model_keys(const std::string& path,
                                  const std::map<std::string, int64_t ModelConfig::*>& known_int_keys,
                                  std::map<std::string, std::string>* spelled = nullptr);

}  // namespace stepsim
