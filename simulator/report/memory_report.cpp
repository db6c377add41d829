#include "simulator/report/memory_report.hpp"
#include "workloads/memory/state_bytes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "simulator/report/rank_ranges.hpp"

namespace stepsim {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

nlohmann::json breakdown_json(const RankMemory& m) {
  return {{"weights_bytes", m.weights_bytes},         {"grads_bytes", m.grads_bytes},
          {"optimizer_bytes", m.optimizer_bytes},     {"buffers_bytes", m.buffers_bytes},
          {"activations_bytes", m.activations_bytes}, {"recompute_bytes", m.recompute_bytes}};
}

}  // namespace

double memory_capacity_bytes(const Plan& plan) { return plan.hardware.memory_GiB * kGiB; }

const RankResult* memory_peak_rank(const SimResult& r) {
  if (!r.has_memory) return nullptr;
  const RankResult* best = nullptr;
  for (const RankResult& rank : r.ranks)
    if (best == nullptr || rank.memory.peak_bytes > best->memory.peak_bytes) best = &rank;
  return best;
}

bool memory_fits(const Plan& plan, const SimResult& r) {
  const RankResult* peak = memory_peak_rank(r);
  return peak == nullptr || peak->memory.peak_bytes <= memory_capacity_bytes(plan);
}

nlohmann::json memory_json(const Plan& plan, const SimResult& r) {
  const RankResult* peak = memory_peak_rank(r);
  if (peak == nullptr) return nullptr;
  int64_t over = 0;
  for (const RankResult& rank : r.ranks) over += rank.memory.peak_bytes > memory_capacity_bytes(plan) ? 1 : 0;
  return {{"peak_bytes", peak->memory.peak_bytes},
          {"peak_rank", peak->rank},
          {"peak_t_s", peak->memory.peak_t_s},
          {"capacity_bytes", memory_capacity_bytes(plan)},
          {"fits", memory_fits(plan, r)},
          {"ranks_over_capacity", over},
          {"breakdown", breakdown_json(peak->memory)},
          {"recompute", to_string(plan.parallel.recompute)},
          {"fp8_stash", plan.parallel.fp8_stash},
          {"adam_moments_dtype", to_string(plan.train.adam_moments_dtype)}};
}

std::string memory_text(const Plan& plan, const SimResult& r) {
  const RankResult* peak = memory_peak_rank(r);
  if (peak == nullptr) return "";
  const double cap = memory_capacity_bytes(plan);
  const std::string offload =
      plan.parallel.cpu_offload_layers > 0
          ? fmt::format(", layers 0-{}'s activations offloaded to host memory at {:g} GB/s", plan.parallel.cpu_offload_layers - 1,
                        plan.hardware.host_link_GBps)
          : "";
  std::string out = fmt::format(
      "\nmemory per GPU (weights {}; recompute {}{}, {} stashes, {} Adam moments, {} gradient reductions; capacity {:g} "
      "GiB)\n",
      weights_format_text(plan), to_string(plan.parallel.recompute), offload, plan.parallel.fp8_stash ? "FP8" : "BF16",
      plan.train.adam_moments_dtype == MomentDtype::FP32 ? "FP32" : "BF16",
      plan.parallel.grad_reduce_dtype == ReduceDtype::FP32 ? "FP32" : "BF16", plan.hardware.memory_GiB);
  // GPUs whose rows read the same share one row ("0-7,64"): a full replay has thousands of twins.
  std::vector<std::string> rows;
  std::map<std::string, std::vector<int64_t>> gpus_of;
  for (const RankResult& rank : r.ranks) {
    const RankMemory& m = rank.memory;
    const std::string row = fmt::format("{:>12.2f}{:>10.3f}{:>10.2f}{:>10.2f}{:>10.2f}{:>10.2f}{:>12.2f}{:>10}",
                                        m.peak_bytes / kGiB, m.peak_t_s, m.weights_bytes / kGiB, m.grads_bytes / kGiB,
                                        m.optimizer_bytes / kGiB, m.buffers_bytes / kGiB,
                                        (m.activations_bytes + m.recompute_bytes) / kGiB, m.peak_bytes <= cap ? "yes" : "NO");
    if (!gpus_of.count(row)) rows.push_back(row);
    gpus_of[row].push_back(rank.rank);
  }
  size_t width = 8;
  for (const auto& row : rows) width = std::max(width, rank_ranges(gpus_of[row]).size() + 2);
  out += fmt::format("  {:<{}}{:>12}{:>10}{:>10}{:>10}{:>10}{:>10}{:>12}{:>10}\n", "GPU", width, "peak GiB", "at s",
                     "weights", "grads", "optim", "buffers", "activations", "fits");
  for (const auto& row : rows) out += fmt::format("  {:<{}}{}\n", rank_ranges(gpus_of[row]), width, row);
  out += fmt::format("  peak {:.2f} GiB ({:.2f} GB) on GPU {} at {:.3f} s: {}\n", peak->memory.peak_bytes / kGiB,
                     peak->memory.peak_bytes / 1e9, peak->rank, peak->memory.peak_t_s,
                     memory_fits(plan, r) ? "the plan fits" : "THE PLAN DOES NOT FIT (simulate --strict exits 3)");
  return out;
}

}  // namespace stepsim
