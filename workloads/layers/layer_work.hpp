// The compute of one layer for one microbatch on one GPU, kernel by kernel (FLOPs and precision),
// grouped into the parts a schedule interleaves: attention and MLP, each in forward (F),
// input-gradient backward (B) and weight-gradient backward (W). No timing decisions here.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim {

enum class LayerPart : uint8_t { AttnF, MlpF, MlpB, AttnB, MlpW, AttnW };
inline constexpr int kLayerParts = 6;
std::string_view to_string(LayerPart p);

struct Kernel {
  std::string_view name;  // e.g. "q_up", "attention_core_bwd", "routed_experts"
  double flops = 0;
  Precision precision = Precision::FP8;
};

struct PartWork {
  std::vector<Kernel> kernels;
  double nonmatmul_s = 0;  // norms, SwiGLU, casts: hardware.nonmatmul_s_per_token_layer model
  double flops(Precision p) const;
  // Seconds at the plan's achievable rates (what the engine charges).
  double seconds(const HardwareConfig& hw) const;
};

struct LayerWork {
  bool moe = false;
  double tokens = 0;         // tokens of the microbatch on this GPU
  double routed_rows = 0;    // token-expert rows this GPU's experts process
  PartWork parts[kLayerParts];
  const PartWork& part(LayerPart p) const { return parts[int(p)]; }
};

// `tokens` = sequences x seq_len of the microbatch; `routed_rows` = rows for this GPU's experts
// (tokens x experts per token when routing is balanced).
LayerWork layer_work(const Plan& plan, int64_t layer, double sequences, double routed_rows);

// The LM head on the last stage, in BF16: F, B (input gradient) and W each cost this much.
PartWork lm_head_work(const Plan& plan, double sequences);

}  // namespace stepsim
