// Per-layer expert popularity (the share of a layer's routed rows each expert expects) for the
// skewed routing models: zipf, dirichlet and hot experts. Which experts are popular is set by a
// latent score per expert and layer, sqrt(c) a_e + sqrt(1 - c) b_{l,e} with a, b standard normal
// and c = scenario.layer_correlation: c = 0 draws each layer's order afresh, c = 1 keeps the same
// popular experts in every layer. How skewed a layer is does not depend on c.
#pragma once

#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim {

// popularity[moe layer index][expert], each row summing to 1. Balanced and deepseek: uniform
// (DeepSeek's scores are iid, so every expert expects the same share). File: the file's shares.
std::vector<std::vector<double>> expert_popularity(const Plan& plan);

// The sorted (descending) popularity profile of one layer before experts are assigned to ranks.
std::vector<double> zipf_profile(int64_t experts, double s);
std::vector<double> hot_profile(int64_t experts, int64_t hot, double share);

}  // namespace stepsim
