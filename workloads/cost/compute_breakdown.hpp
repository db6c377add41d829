// Where one GPU's compute goes, by layer kind and by class (GEMM, attention core, memory-bound,
// kernel launch), under the plan's compute model: the numbers the replay charges (ModelWorkload
// builds its per-op costs from the same functions), summed over what the GPU's pipeline rank runs.
#pragma once

#include <string>
#include <vector>

#include "vocabulary/plan.hpp"
#include "workloads/cost/part_cost.hpp"

namespace stepsim::cost {

struct KindCost {
  std::string kind;       // "dense layer", "MoE layer", "LM head", "optimizer step"
  int64_t on_rank = 0;    // how many the pipeline rank runs per microbatch (the optimizer: per step)
  ClassSeconds forward, input_grad, weight_grad;  // the mean one, one microbatch (optimizer: forward)
  ClassSeconds total() const {
    ClassSeconds s = forward;
    s += input_grad;
    return s += weight_grad;
  }
};

struct ComputeBreakdown {
  ComputeModel model = ComputeModel::Predicted;
  int64_t pipeline_rank = 0;
  double microbatches = 0;        // per chunk of the rank, at the mean microbatch
  std::vector<KindCost> kinds;    // the kinds this rank runs
  ClassSeconds step;              // the rank's step: kinds x on_rank x microbatches (+ the optimizer)
  // Of step.gemm, parallel.tp_comm_overlap's: each TP block's forward row-parallel GEMM runs on the
  // SMs userbuffers' reduce-scatter leaves it, sms / (sms - 16) times as long.
  double ub_sm_margin_s = 0;
  // Of step.launch, parallel.split_lone_chunks': a lone chunk of MoE layers runs as two halves,
  // each launching the chunk's kernels.
  double lone_halves_launch_s = 0;
};

// At speed of light the classes are: GEMMs and the attention core at the stated rates over the
// profile's efficiencies, memory-bound = hardware.nonmatmul_s_per_token_layer, no launches.
ComputeBreakdown compute_breakdown(const Plan& plan, int64_t pipeline_rank);

}  // namespace stepsim::cost
