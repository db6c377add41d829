#include "simulator/report/routing_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

#include "schedules/registry.hpp"
#include "workloads/layers/layer_partition.hpp"
#include "vocabulary/rank_layout.hpp"
#include "workloads/routing/expert_loads.hpp"

namespace stepsim {

namespace {

struct LayerLoad {
  int64_t layer = 0;
  double expert_max_over_mean = 0;  // mean over microbatches of the busiest expert's load / mean
  double gpu_max_over_mean = 0;     // same for the busiest GPU of an EP group
};

// Per pipeline rank: the GPU of EP group 0 (the others mirror it) whose experts had the most rows
// in most of the rank's MoE all-to-alls, which every other GPU of the group then waited for.
struct Waited {
  int64_t rank = 0, gpu = 0;
  double share = 0;  // of the rank's (MoE layer, microbatch) pairs
  int64_t most_compute_gpu = -1;  // the simulated GPU of that group with the most compute time
};

struct Summary {
  std::vector<LayerLoad> layers;
  std::vector<Waited> waited;
};

Summary summarize_loads(const Plan& plan, const SimResult& r) {
  Summary s;
  const ExpertLoads loads(plan);
  const int64_t E = loads.experts(), ep = loads.ep(), m = loads.microbatches();
  for (int64_t l = loads.first_moe_layer(); l < loads.first_moe_layer() + loads.moe_layers(); ++l) {
    LayerLoad ll{l, 0, 0};
    if (loads.balanced()) {  // exactly the mean, without summing 1 / E rounding errors
      s.layers.push_back({l, 1.0, 1.0});
      continue;
    }
    for (int64_t mb = 0; mb < m; ++mb) {
      double e_max = 0, g_max = 0;
      for (int64_t e = 0; e < E; ++e) e_max = std::max(e_max, loads.expert_share(l, mb, e));
      for (int64_t g = 0; g < ep; ++g) g_max = std::max(g_max, loads.slot_share(l, mb, g));
      ll.expert_max_over_mean += e_max * double(E) / double(m);
      ll.gpu_max_over_mean += g_max * double(ep) / double(m);
    }
    s.layers.push_back(ll);
  }
  if (loads.balanced()) return s;  // every GPU alike: nobody waits for anyone in particular
  const auto schedule = sched::make_schedule(plan);
  const auto stages = partition_layers(plan);
  const int64_t ranks = schedule->ranks();
  const RankLayout layout(plan);
  for (int64_t rank = 0; rank < ranks; ++rank) {
    std::vector<int64_t> slowest(size_t(ep), 0);
    int64_t pairs = 0;
    for (int32_t c = 0; c < schedule->chunks_per_rank(); ++c) {
      const StageLayers& st = stages[size_t(schedule->layer_slot(schedule->stage_of(rank, c)))];
      for (int64_t l = std::max(st.first, loads.first_moe_layer()); l < st.first + st.count; ++l)
        for (int64_t mb = 0; mb < m; ++mb, ++pairs) {
          const double* share = loads.slot_shares(l, mb);
          ++slowest[size_t(std::max_element(share, share + ep) - share)];
        }
    }
    if (pairs == 0) continue;
    Waited w;
    w.rank = rank;
    const int64_t slot = std::max_element(slowest.begin(), slowest.end()) - slowest.begin();
    w.gpu = layout.ep_group(layout.first_gpu_of_rank(rank))[size_t(slot)];
    w.share = double(slowest[size_t(slot)]) / double(pairs);
    double most = -1;
    for (const RankResult& rr : r.ranks)
      if (layout.pipeline_rank(rr.rank) == rank && layout.ep_group_index(rr.rank) == 0 && rr.compute_s > most) {
        most = rr.compute_s;
        w.most_compute_gpu = rr.rank;
      }
    s.waited.push_back(w);
  }
  return s;
}

}  // namespace

nlohmann::json routing_json(const Plan& plan, const SimResult& r, std::optional<double> base_s) {
  nlohmann::json j;
  j["model"] = to_string(plan.scenario.routing);
  j["seed"] = plan.scenario.seed;
  if (!plan.model.is_moe() || plan.workload.kind != WorkloadKind::Model) return j;
  const Summary s = summarize_loads(plan, r);
  const auto summary = [&](double LayerLoad::*field) {
    const auto worst = std::max_element(s.layers.begin(), s.layers.end(),
                                        [&](const LayerLoad& a, const LayerLoad& b) { return a.*field < b.*field; });
    double mean = 0;
    for (const auto& l : s.layers) mean += l.*field / double(s.layers.size());
    return nlohmann::json{{"mean_over_layers", mean}, {"worst_layer", worst->layer}, {"worst", (*worst).*field}};
  };
  j["expert_max_over_mean"] = summary(&LayerLoad::expert_max_over_mean);
  j["gpu_max_over_mean"] = summary(&LayerLoad::gpu_max_over_mean);
  j["layers"] = nlohmann::json::array();
  for (const auto& l : s.layers)
    j["layers"].push_back({{"layer", l.layer},
                           {"expert_max_over_mean", l.expert_max_over_mean},
                           {"gpu_max_over_mean", l.gpu_max_over_mean}});
  if (base_s) {
    j["mean_load_step_s"] = *base_s;
    j["slowdown"] = r.step_time_s / *base_s - 1.0;
  } else {
    j["mean_load_step_s"] = nullptr;
    j["slowdown"] = uneven_loads(plan) ? nlohmann::json(nullptr) : nlohmann::json(0.0);
  }
  j["waited_for"] = nlohmann::json::array();
  for (const auto& w : s.waited)
    j["waited_for"].push_back({{"pipeline_rank", w.rank},
                               {"gpu", w.gpu},
                               {"share_of_all_to_alls", w.share},
                               {"most_compute_gpu", w.most_compute_gpu >= 0 ? nlohmann::json(w.most_compute_gpu)
                                                                            : nlohmann::json(nullptr)}});
  return j;
}

std::string routing_text(const Plan& plan, const SimResult& r, std::optional<double> base_s) {
  if (!uneven_loads(plan) || plan.workload.kind != WorkloadKind::Model) return "";
  const Summary s = summarize_loads(plan, r);
  double e_mean = 0, g_mean = 0;
  const LayerLoad* worst = &s.layers.front();
  for (const auto& l : s.layers) {
    e_mean += l.expert_max_over_mean / double(s.layers.size());
    g_mean += l.gpu_max_over_mean / double(s.layers.size());
    if (l.gpu_max_over_mean > worst->gpu_max_over_mean) worst = &l;
  }
  std::string out = fmt::format(
      "\nrouting {} (seed {}): busiest expert {:.2f} x its mean load, busiest GPU of an EP group {:.2f} x (means over "
      "MoE layers; worst layer {}: GPU {:.2f} x)\n",
      to_string(plan.scenario.routing), plan.scenario.seed, e_mean, g_mean, worst->layer, worst->gpu_max_over_mean);
  if (base_s)
    out += fmt::format("  step {:.3f} s vs {:.3f} s with every expert at its mean load: {:+.1f} %\n", r.step_time_s,
                       *base_s, 100.0 * (r.step_time_s / *base_s - 1.0));
  out += "  waited for (EP group 0 of each pipeline rank; every group runs the same loads):";
  for (const auto& w : s.waited) out += fmt::format(" rank {}: GPU {} ({:.0f} %)", w.rank, w.gpu, 100.0 * w.share);
  return out + "\n";
}

}  // namespace stepsim
