// How Megatron-LM and torchtitan place decoder layers on pipeline stages, as their own code does
// (Megatron: megatron/core/transformer/transformer_block.py get_num_layers_to_build,
// transformer_layer.py get_transformer_layer_offset, pipeline_parallel_layer_layout.py;
// torchtitan: torchtitan/distributed/pipeline_parallel.py _generate_llm_fqn_per_model_part), so an
// imported plan keeps the framework's assignment (parallel.stage_layers). Stages are listed in
// layer order: stage c x pp + r is pipeline rank r's virtual stage c. A split the framework refuses
// throws SplitError with the framework's reason.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace stepsim {

struct SplitError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Megatron's default split: `layers` (+1 for the embedding, +1 for the loss when NeMo's
// account_for_embedding / account_for_loss_in_pipeline_split count them as layers) evenly over
// pp x vp stages; the first stage holds one layer fewer for the embedding, the last one fewer for
// the loss.
std::vector<int64_t> megatron_even_split(int64_t layers, int64_t pp, int64_t vp, bool embedding_is_layer,
                                         bool loss_is_layer);

// --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers (0 = not given): the
// first (last) pipeline rank holds that many layers over its vp stages, the other ranks share the
// rest evenly.
std::vector<int64_t> megatron_uneven_split(int64_t layers, int64_t pp, int64_t vp, int64_t first, int64_t last);

// --pipeline-model-parallel-layout, e.g. "Et*3|(tt|)*29,m|L": one entry per stage holding the
// count of decoder layers ("t") of each; the stage count is a multiple of pp (its quotient the
// virtual stages). Checks what Megatron checks: E first and L last, once each, `layers` t's, the
// MTP layers ("m", `mtp_layers` of them) after every decoder layer.
std::vector<int64_t> megatron_layout_split(const std::string& layout, int64_t pp, int64_t layers, int64_t mtp_layers);

// torchtitan: `stages` stages over `layers` layers with the embedding counted as `input_weight`
// layers and the norm and head as `output_weight` (pipeline_parallel_first / last_stage_less_layers).
std::vector<int64_t> torchtitan_split(int64_t stages, int64_t layers, int64_t input_weight, int64_t output_weight);

}  // namespace stepsim
