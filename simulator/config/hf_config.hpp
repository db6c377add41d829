// Reads the model keys stepsim knows from a Hugging Face config.json, as-is: keys with no effect
// on FLOPs or bytes (rope, dropout, token ids, ...) are ignored, null means "feature absent" (0;
// for num_key_value_heads and head_dim: not given), and common aliases (Mixtral's
// num_local_experts, Qwen's num_experts) map onto the DeepSeek names. An MoE config without
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

nlohmann::json read_hf_model_keys(const std::string& path,
                                  const std::map<std::string, int64_t ModelConfig::*>& known_int_keys);

}  // namespace stepsim
