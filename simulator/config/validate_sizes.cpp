#include "simulator/config/validate_sizes.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "vocabulary/model_params.hpp"

namespace stepsim {
namespace {

std::string sci(long double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", double(x));
  return buf;
}

}  // namespace

void validate_sizes(const Plan& p) {
  const auto fail = [&](const std::string& key, const std::string& what) {
    throw ConfigError(p.source + ": " + key + ": " + what);
  };
  // The per-key bounds keep every per-layer product inside int64 (count_params forms them); the
  // whole-model sums are checked here in long double before anything sums them in int64.
  const ModelConfig& m = p.model;
  const ModelParams mp = count_params(m);
  using LD = long double;
  const LD moe_layer = LD(mp.attention.total()) + LD(mp.norms_per_layer) + LD(mp.router) + LD(mp.shared_experts) +
                       LD(mp.expert) * LD(mp.experts_per_layer);
  const LD dense_layer = LD(mp.attention.total()) + LD(mp.norms_per_layer) + LD(mp.dense_ffn);
  const LD total = moe_layer * LD(mp.moe_layers) + dense_layer * LD(mp.dense_layers) + LD(mp.embedding) +
                   LD(mp.lm_head) + LD(mp.final_norm);
  constexpr LD kMaxParams = LD(1) * (int64_t(1) << 50);  // 1.1e15, 500x the largest model trained
  if (total > kMaxParams)
    fail("model", sci(total) + " parameters exceed the " + sci(kMaxParams) +
                      " stepsim counts without overflow; lower hidden_size, the FFN widths, n_routed_experts or "
                      "num_hidden_layers");
  // Routing keeps a share per MoE layer and expert.
  if (LD(m.moe_layers()) * LD(m.n_routed_experts) > LD(1 << 24))
    fail("model.n_routed_experts", std::to_string(m.n_routed_experts) + " experts x " + std::to_string(m.moe_layers()) +
                                       " MoE layers exceed the 16.8 M expert slots stepsim keeps in memory; lower either");
  // Activation bytes: a microbatch's tokens x hidden x a few hundred bytes per element and layer.
  const LD micro_tokens = LD(p.train.global_batch) * LD(p.train.seq_len) /
                          std::max<LD>(1, LD(p.dp()) * LD(p.parallel.microbatches));
  const LD act = std::max<LD>(1, micro_tokens) * LD(m.hidden_size) * LD(m.num_hidden_layers) * 256;
  if (act > LD(int64_t(1) << 62))
    fail("train.seq_len", "a microbatch of " + sci(micro_tokens) + " tokens x hidden_size " +
                              std::to_string(m.hidden_size) +
                              " overflows the memory model's byte counts; lower train.seq_len or train.global_batch, or "
                              "raise parallel.microbatches");
}

}  // namespace stepsim
