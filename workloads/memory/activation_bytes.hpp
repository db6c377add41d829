// Activation bytes one layer keeps from its forward for its backward, per token, under a recompute
// policy: the part-2 accounting of the seed series (ezyang, "DeepSeek-V3: from roofline to
// reality", 02-hopper-memory). A tensor is kept when some backward needs it and the policy does not
// rebuild it; GEMM inputs kept for the weight gradient are FP8 with one FP32 scale per 128 values
// (DeepSeek-V3 report 3.3.2) when parallel.fp8_stash is on, BF16 otherwise.
#pragma once

#include "vocabulary/plan.hpp"

namespace stepsim {

struct LayerActivations {
  // Kept from the layer's forward until its weight gradient is done.
  double saved_per_token = 0;
  // Rebuilt by the backward from the layer's first backward op until its weight gradient is done:
  // everything but the layer input under parallel.recompute=full; what the plain checkpoints
  // (mlp, moe, shared_experts) dropped under those modules; 0 otherwise.
  double recompute_per_token = 0;
};

LayerActivations layer_activations(const Plan& plan, bool moe_layer);

// The LM head keeps its logits (BF16) and their softmax (FP32) for the loss's backward.
double head_activation_bytes_per_token(const ModelConfig& m);

// Of those, what the head's weight gradient still needs once its input gradient is done, per
// token of the GPU's share (seq_len / (tp x cp) tokens): its output gradient (BF16, as wide as the
// logits, written over them) and its input (BF16 hidden, the whole sequence on every TP rank). A
// schedule that defers W (ZB-H1) holds only this until then -- the zero-bubble paper's accounting
// (Qi et al., ICLR 2024: W needs a layer's input and its output gradient).
double head_weight_gradient_bytes_per_token(const Plan& plan);

// Bytes per value of a saved FP8 GEMM input (1 + 4/128), or BF16's 2 without FP8 stashes.
double stash_bytes_per_value(const Plan& plan);

}  // namespace stepsim
