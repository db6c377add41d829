// Mixtral 8x7B (its HF config.json) on the Llama 3.1 8B plan (workloads/llama-3.1-8b.yaml from
// its `train:` section on): an MoE model whose EP groups fit inside a node.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "simulator/config/config_loader.hpp"

namespace stepsim::test {

inline Plan mixtral_on_llama_plan(const std::vector<std::string>& sets) {
  std::ifstream in(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string llama = ss.str();
  const std::string text = "model:\n  config_json: " + std::string(STEPSIM_SOURCE_DIR) +
                           "/workloads/models/mixtral-8x7b.config.json\n" + llama.substr(llama.find("\ntrain:"));
  return load_plan_from_string(text, "mixtral.yaml", sets);
}

}  // namespace stepsim::test
