// What one transformer layer is, decided once from the plan: dense or MoE, attention kind, the
// precision of its GEMMs and what its backward recomputes. FLOPs (layer_work), bytes and memory
// (memory/) read this instead of re-deriving it from the model's keys.
#pragma once

#include <cstdint>

#include "vocabulary/plan.hpp"

namespace stepsim {

enum class AttentionKind : uint8_t { Mla, Gqa };  // Gqa covers multi-head attention (kv heads = heads)

struct LayerSpec {
  int64_t layer = 0;
  bool moe = false;
  AttentionKind attention = AttentionKind::Gqa;
  Precision precision = Precision::FP8;  // the layer's GEMMs (attention core, routers: always BF16)
  Recompute recompute = Recompute::DeepSeek;
  int64_t attention_window = 0;  // keys a query attends to at most (sliding window); 0 = full causal
};

inline LayerSpec layer_spec(const Plan& plan, int64_t layer) {
  LayerSpec s;
  s.layer = layer;
  s.moe = plan.model.is_moe_layer(layer);
  s.attention = plan.model.is_mla() ? AttentionKind::Mla : AttentionKind::Gqa;
  s.precision = plan.train.precision;
  s.recompute = plan.parallel.recompute;
  s.attention_window = plan.model.attention_window(layer);
  return s;
}

}  // namespace stepsim
