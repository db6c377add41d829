// Where a plan's experts sit: the dispatcher, expert TP, and the nodes each EP group spans (the
// rank layout's Megatron order decides it, and the all-to-all traffic follows it), for the text
// reports' plan lines and the JSON's `experts` object. Empty / null for a dense model.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vocabulary/plan.hpp"

namespace stepsim {

// What the line says without its label: "EP 16 (alltoall dispatcher), expert TP 1, grouped GEMMs:
// each EP group on 2 nodes (GPU 0's: nodes 0-1)" (the HTML plan table's experts row); "" if dense.
std::string expert_layout_summary(const Plan& plan);
// One line, "experts: " and the summary, then a newline; "" for a dense model.
std::string expert_layout_text(const Plan& plan);
// {dispatcher, ep, expert_tp, grouped_gemm, capacity_factor, pad_to_capacity, nodes_per_group,
// groups: [{pipeline_rank, first_gpu, nodes: [...]}, ...]}; null for a dense model.
nlohmann::json expert_layout_json(const Plan& plan);

}  // namespace stepsim
