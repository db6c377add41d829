#include "workloads/traffic/model_parallel_comm.hpp"

#include <algorithm>

#include "vocabulary/model_params.hpp"
#include "vocabulary/dtype_bytes.hpp"

namespace stepsim {

int64_t kv_head_replicas(const Plan& plan) {
  const int64_t kv = plan.model.kv_heads(), tp = RankLayout(plan).tp();
  return kv < tp ? tp / kv : 1;
}

int tp_qkv_collectives_per_layer(const Plan& plan) { return kv_head_replicas(plan) > 1 ? 2 : 0; }

double tp_qkv_collective_bytes(const Plan& plan, double tokens) {
  const ModelConfig& m = plan.model;
  const double tp = double(RankLayout(plan).tp());
  const double width = double(m.num_attention_heads) * double(qk_head_dim(m)) +
                       double(m.kv_heads()) * double(qk_head_dim(m) + v_head_dim(m));
  return (tp - 1.0) / tp * tokens * width * kBf16Bytes;
}

int tp_collectives_per_layer(const Plan& plan, bool moe_layer) {
  if (RankLayout(plan).tp() <= 1) return 0;
  return moe_layer ? 5 : 10;
}

BlockLaunches tp_cp_block_launches(const Plan& plan, bool attention, bool backward, bool moe_layer, bool fp8_layer,
                                   bool recompute_up_proj) {
  const RankLayout layout(plan);
  const ModelConfig& m = plan.model;
  BlockLaunches out;
  // CP's exchanges (cp_exchanges), each a call; allgather's gather K and V apart, and reduce-scatter
  // dK and dV apart, so two calls each.
  if (attention && layout.cp() > 1)
    out.calls += double(cp_exchanges(plan, 1.0, backward).size()) *
                 (plan.parallel.cp_comm_type == CpCommType::AllGather ? 2.0 : 1.0);
  if (layout.tp() <= 1 || (!attention && moe_layer)) return out;
  const bool current = fp8_layer && plan.train.fp8_recipe_applies() && plan.train.fp8_recipe == Fp8Recipe::Tensorwise;
  const bool ub = plan.parallel.tp_comm_overlap;
  double collectives = 0, amax = 0;
  if (attention && m.is_mla()) {
    const double latents = m.q_lora_rank > 0 ? 2 : 1;  // the latents q_up and kv_up gather
    const double recomputed = recompute_up_proj ? latents : 0;
    collectives = backward ? 1 + latents + 1 + latents + recomputed : 1 + latents + 1;
    amax = backward ? 1 + recomputed : latents;
  } else {
    collectives = backward ? 3 : 2;
    if (attention) collectives += double(tp_qkv_collectives_per_layer(plan)) / 2;
    amax = 1;
  }
  if (!ub) out.calls += collectives;
  if (current) out.looped += amax;
  return out;
}

TpGemmShare tp_gemm_share(const Plan& plan, std::string_view kernel) {
  if (kernel == "q_down" || kernel == "kv_down" || kernel == "q_up" || kernel == "kv_up") return {1, 0};
  if (kernel == "attn_out") return {0, 1};
  if (kernel == "dense_ffn") {  // gate and up (column), down (row): the down is hidden x intermediate
    const double down = double(plan.model.hidden_size) * double(plan.model.intermediate_size);
    const double row = down / double(count_params(plan.model).dense_ffn);
    return {1 - row, row};
  }
  return {};
}

double ring_exchange_s(double gemm_s, double comm_s, int64_t tp) {
  if (tp <= 1) return gemm_s;
  const double n = double(tp);
  return gemm_s / n + (n - 1.0) * std::max(gemm_s / n, comm_s / (n - 1.0));
}

double split_reduce_scatter_s(double gemm_s, double comm_s, int64_t splits) {
  const double n = double(splits);
  return gemm_s / n + (n - 1.0) * std::max(gemm_s / n, comm_s / n) + comm_s / n;
}

double ub_gemm_stretch(const HardwareConfig& hw) {
  return double(hw.sms) / double(std::max<int64_t>(1, hw.sms - kUbCommSms));
}

double ub_buffer_bytes(const Plan& plan, double tokens) {
  if (RankLayout(plan).tp() <= 1 || !plan.parallel.tp_comm_overlap) return 0;
  const double all_gather = plan.train.precision == Precision::FP8 ? 1.0 : kBf16Bytes;
  return tokens * double(plan.model.hidden_size) * (6.0 * all_gather + 4.0 * kBf16Bytes);
}

double tp_collective_bytes(const Plan& plan, double tokens) {
  const double tp = double(RankLayout(plan).tp());
  return (tp - 1.0) / tp * tokens * double(plan.model.hidden_size) * kBf16Bytes;
}

double cp_kv_bytes_per_token(const Plan& plan) {
  const ModelConfig& m = plan.model;
  const double tp = double(RankLayout(plan).tp());
  const double qk = double(qk_head_dim(m)), v = double(v_head_dim(m));
  // KV heads are split over TP; with fewer KV heads than TP ranks each rank keeps one (replicated).
  return std::max(1.0, double(m.kv_heads()) / tp) * (qk + v) * kBf16Bytes;
}

double cp_collective_bytes(const Plan& plan, double tokens) {
  const double cp = double(RankLayout(plan).cp());
  return (cp - 1.0) / cp * tokens * cp_kv_bytes_per_token(plan);
}

double cp_a2a_bytes(const Plan& plan, double tokens, bool qkv) {
  const ModelConfig& m = plan.model;
  const RankLayout layout(plan);
  const double cp = double(layout.cp()), tp = double(layout.tp());
  const double q_heads = double(m.num_attention_heads) / tp;
  const double per_token = qkv ? q_heads * double(qk_head_dim(m)) + cp_kv_bytes_per_token(plan) / kBf16Bytes
                               : q_heads * double(v_head_dim(m));
  return (cp - 1.0) / cp * tokens / cp * per_token * kBf16Bytes;
}

std::vector<CpExchangeBytes> cp_exchanges(const Plan& plan, double tokens, bool backward) {
  const int64_t cp = RankLayout(plan).cp();
  if (cp <= 1) return {};
  const double c = cp_collective_bytes(plan, tokens);
  switch (plan.parallel.cp_comm_type) {
    case CpCommType::P2p: {
      // A ring step each: forward cp - 1 of K/V; backward K/V, then K/V with dK/dV, then dK/dV.
      const double e = c / double(cp - 1);
      if (!backward) return std::vector<CpExchangeBytes>(size_t(cp - 1), {CpExchange::KvRing, e});
      std::vector<CpExchangeBytes> out = {{CpExchange::KvRing, e}};
      for (int64_t i = 1; i < cp - 1; ++i) out.push_back({CpExchange::KvDkvRing, 2 * e});
      out.push_back({CpExchange::DkvRing, e});
      return out;
    }
    case CpCommType::AllGather:
      if (!backward) return {{CpExchange::KvAllGather, c}};
      return {{CpExchange::KvAllGather, c}, {CpExchange::DkvReduceScatter, c}};
    case CpCommType::A2a: {
      const double qkv = cp_a2a_bytes(plan, tokens, true), out = cp_a2a_bytes(plan, tokens, false);
      if (!backward) return {{CpExchange::QkvAllToAll, qkv}, {CpExchange::OutAllToAll, out}};
      return {{CpExchange::OutAllToAll, out}, {CpExchange::QkvAllToAll, qkv}};
    }
  }
  return {};
}

int cp_attention_steps(const Plan& plan) {
  const int64_t cp = RankLayout(plan).cp();
  if (cp <= 1) return 1;
  switch (plan.parallel.cp_comm_type) {
    case CpCommType::P2p: return int(cp);
    case CpCommType::AllGather: return 2;
    case CpCommType::A2a: return 1;
  }
  return 1;
}

}  // namespace stepsim
