// Reads the model keys stepsim knows from a Hugging Face config.json, as-is: unknown keys are
// ignored, null means "feature absent" (0), and common aliases (Mixtral's num_local_experts,
// Qwen's num_experts) map onto the DeepSeek names. An MoE config without moe_intermediate_size
// (Mixtral) takes intermediate_size as the experts' width.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "simulator/config/plan.hpp"

namespace stepsim {

nlohmann::json read_hf_model_keys(const std::string& path,
                                  const std::map<std::string, int64_t ModelConfig::*>& known_int_keys);

}  // namespace stepsim
