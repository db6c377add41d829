#include "workloads/traffic/model_parallel_comm.hpp"

#include <algorithm>

#include "vocabulary/model_params.hpp"
#include "vocabulary/dtype_bytes.hpp"

namespace stepsim {

namespace {
}

int tp_collectives_per_layer(const Plan& plan, bool moe_layer) {
  if (plan.parallel.tp <= 1) return 0;
  return moe_layer ? 4 : 8;
}

double tp_collective_bytes(const Plan& plan, double tokens) {
  const double tp = double(plan.parallel.tp);
  return (tp - 1.0) / tp * tokens * double(plan.model.hidden_size) * kBf16Bytes;
}

double cp_kv_bytes_per_token(const Plan& plan) {
  const ModelConfig& m = plan.model;
  const double tp = double(plan.parallel.tp);
  const double qk = double(qk_head_dim(m)), v = double(v_head_dim(m));
  // KV heads are split over TP; with fewer KV heads than TP ranks each rank keeps one (replicated).
  const double kv_heads = m.is_mla() ? double(m.num_attention_heads)
                                     : double(m.num_key_value_heads > 0 ? m.num_key_value_heads : m.num_attention_heads);
  return std::max(1.0, kv_heads / tp) * (qk + v) * kBf16Bytes;
}

double cp_collective_bytes(const Plan& plan, double tokens) {
  const double cp = double(plan.parallel.cp);
  return (cp - 1.0) / cp * tokens * cp_kv_bytes_per_token(plan);
}

}  // namespace stepsim
