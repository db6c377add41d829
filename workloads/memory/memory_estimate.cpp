#include "workloads/memory/memory_estimate.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "schedules/registry.hpp"
#include "workloads/layers/layer_partition.hpp"
#include "workloads/memory/activation_bytes.hpp"
#include "workloads/memory/activation_offload.hpp"
#include "workloads/memory/state_bytes.hpp"
#include "vocabulary/layer_spec.hpp"
#include "vocabulary/model_params.hpp"

namespace stepsim {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

MemoryEstimate estimate_memory(const Plan& plan) {
  const ModelParams params = count_params(plan.model);
  const std::vector<StageLayers> stages = partition_layers(plan);
  const auto schedule = sched::make_schedule(plan);
  const double tokens = largest_microbatch_tokens(plan);
  const LayerActivations dense = layer_activations(plan, false), moe = layer_activations(plan, true);
  MemoryEstimate best;
  for (int64_t rank = 0; rank < schedule->ranks(); ++rank) {
    MemoryEstimate e;
    e.rank = rank;
    e.microbatch_tokens = tokens;
    e.in_flight_microbatches = schedule->in_flight_microbatches(rank);
    const HeldParams held = rank_held_params(plan, params, *schedule, stages, rank);
    double saved_per_token = 0, recompute_per_token = 0;
    std::vector<double> saved_by_layer;  // per token, in layer order (what an offload schedule needs)
    for (int32_t c = 0; c < schedule->chunks_per_rank(); ++c) {
      const StageLayers& s = stages[size_t(schedule->layer_slot(schedule->stage_of(rank, c)))];
      for (int64_t l = s.first; l < s.first + s.count; ++l) {
        const bool is_moe = layer_spec(plan, l).moe;
        const LayerActivations& a = is_moe ? moe : dense;
        saved_per_token += a.saved_per_token;
        saved_by_layer.push_back(a.saved_per_token);
        recompute_per_token = std::max(recompute_per_token, a.recompute_per_token);
        ++e.layers;
        if (is_moe) ++e.moe_layers;
      }
      e.lm_head = e.lm_head || s.has_lm_head;
    }
    e.fixed = static_memory(plan, held, rank_quantised_params(plan, params, *schedule, stages, rank));
    e.weights_label = "weights (" + weights_format_text(plan, true) + ")";
    e.grads_label = std::string("gradients (") +
                    (plan.parallel.zero < 2 && plan.parallel.grad_reduce_dtype == ReduceDtype::BF16 ? "BF16" : "FP32") + ")";
    // The head's logits live for one microbatch (its backward follows at once); a full-recompute
    // backward rebuilds one layer at a time.
    const double head = e.lm_head ? head_activation_bytes_per_token(plan.model) : 0.0;
    const ActivationOffload offload(plan);
    if (offload.on()) e.activations_label = fmt::format("activations ({} offloaded)", plan.parallel.cpu_offload_layers);
    // Offloading (one stage, one microbatch in flight, no recompute: validate_plan) keeps fewer layers.
    e.activations_bytes = offload.on() ? tokens * offload.peak_saved(saved_by_layer, head)
                                       : tokens * (e.in_flight_microbatches * saved_per_token + recompute_per_token + head);
    e.total_bytes = e.fixed.total() + e.activations_bytes;
    e.capacity_bytes = plan.hardware.memory_GiB * kGiB;
    e.fits = e.total_bytes <= e.capacity_bytes;
    if (rank == 0 || e.total_bytes > best.total_bytes) best = e;
  }
  return best;
}

nlohmann::json memory_estimate_json(const MemoryEstimate& e) {
  return {{"rank", e.rank},
          {"layers", e.layers},
          {"moe_layers", e.moe_layers},
          {"lm_head", e.lm_head},
          {"in_flight_microbatches", e.in_flight_microbatches},
          {"microbatch_tokens", e.microbatch_tokens},
          {"weights_bytes", e.fixed.weights_bytes},
          {"grads_bytes", e.fixed.grads_bytes},
          {"optimizer_bytes", e.fixed.optimizer_bytes},
          {"buffers_bytes", e.fixed.buffers_bytes},
          {"activations_bytes", e.activations_bytes},
          {"total_bytes", e.total_bytes},
          {"capacity_bytes", e.capacity_bytes},
          {"fits", e.fits}};
}

std::string memory_estimate_text(const MemoryEstimate& e) {
  std::string out = fmt::format(
      "memory (static estimate, busiest pipeline rank {}: {} layers ({} MoE){}, {:g} microbatches of {:g} tokens "
      "in flight)\n",
      e.rank, e.layers, e.moe_layers, e.lm_head ? " + LM head" : "", e.in_flight_microbatches, e.microbatch_tokens);
  const auto line = [&](const char* name, double bytes) {
    out += fmt::format("  {:<28}{:>10.2f} GB{:>10.2f} GiB\n", name, bytes / 1e9, bytes / kGiB);
  };
  line(e.weights_label.c_str(), e.fixed.weights_bytes);
  line(e.grads_label.c_str(), e.fixed.grads_bytes);
  line("optimizer state", e.fixed.optimizer_bytes);
  line("buffers", e.fixed.buffers_bytes);
  line(e.activations_label.c_str(), e.activations_bytes);
  line("total", e.total_bytes);
  out += fmt::format("  {} in {:g} GiB per GPU\n", e.fits ? "fits" : "DOES NOT FIT", e.capacity_bytes / kGiB);
  return out;
}

}  // namespace stepsim
