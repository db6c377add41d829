// Measured expert loads (scenario.routing=file): a per-layer per-expert token histogram.
//
// CSV (.csv): a header `layer,expert,tokens`, then one row per (MoE layer, expert); `#` starts a
//   comment line. JSON (.json): {"layers": {"3": [tokens of expert 0, expert 1, ...], "4": [...]}}.
// Layers are the model's layer indices (0-based, so DeepSeek-V3's MoE layers are 3..60); every MoE
// layer must be listed with every expert, tokens finite and >= 0, and at least one token per layer.
// Only the shares matter: the step's own token count is spread in these proportions.
#pragma once

#include <string>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim {

// shares[moe layer index][expert], each row summing to 1; ConfigError naming the file, the key
// (scenario.load_file) and the line or layer on bad input.
std::vector<std::vector<double>> read_load_file(const Plan& plan);

}  // namespace stepsim
