#include "workloads/routing/expert_loads.hpp"

#include <algorithm>
#include <cmath>

#include "workloads/routing/expert_popularity.hpp"
#include "vocabulary/seeded_random.hpp"
#include "vocabulary/rank_layout.hpp"

namespace stepsim {

namespace {

constexpr uint64_t kStreamCounts = 4;  // see SeededRandom; 1..3 are expert_popularity's

bool sampled(Routing r) { return r == Routing::Zipf || r == Routing::Dirichlet || r == Routing::Hot; }

}  // namespace

bool uneven_loads(const Plan& plan) {
  const Routing r = plan.scenario.routing;
  return plan.model.is_moe() && r != Routing::Balanced && r != Routing::DeepSeek && !plan.scenario.mean_loads_only;
}

double balanced_kept_rows(const Plan& plan) {
  const ParallelConfig& par = plan.parallel;
  if (!plan.model.is_moe() || par.moe_capacity_factor <= 0) return 1.0;
  return par.moe_pad_to_capacity ? par.moe_capacity_factor : std::min(1.0, par.moe_capacity_factor);
}

double ExpertLoads::group_rows_per_microbatch(const Plan& plan) {
  return plan.sequences_per_replica() / double(plan.parallel.microbatches) * double(RankLayout(plan).ep()) *
         double(plan.train.seq_len) * double(plan.model.num_experts_per_tok);
}

ExpertLoads::ExpertLoads(const Plan& plan) {
  const ModelConfig& m = plan.model;
  const ScenarioConfig& s = plan.scenario;
  balanced_ = !uneven_loads(plan);
  if (!m.is_moe()) return;
  experts_ = m.n_routed_experts;
  ep_ = RankLayout(plan).ep();
  microbatches_ = plan.parallel.microbatches;
  moe_layers_ = m.moe_layers();
  first_moe_layer_ = m.first_k_dense_replace;
  const auto popularity = balanced_ ? std::vector<std::vector<double>>(size_t(moe_layers_),
                                                                       std::vector<double>(size_t(experts_), 1.0 / double(experts_)))
                                    : expert_popularity(plan);
  const bool noise = sampled(s.routing) && !balanced_;
  const double n = group_rows_per_microbatch(plan);
  SeededRandom rng(s.seed, kStreamCounts);
  expert_.resize(size_t(moe_layers_ * microbatches_ * experts_));
  slot_.assign(size_t(moe_layers_ * microbatches_ * ep_), 0.0);
  std::vector<double> z(static_cast<size_t>(experts_)), count(static_cast<size_t>(experts_));
  const int64_t per_slot = experts_ / ep_;
  for (int64_t l = 0; l < moe_layers_; ++l) {
    const std::vector<double>& p = popularity[size_t(l)];
    for (int64_t mb = 0; mb < microbatches_; ++mb) {
      count = p;
      if (noise) {
        // Multinomial(n, p) ~ n p + sqrt(n) (sqrt(p_e) z_e - p_e sum_f sqrt(p_f) z_f): covariance
        // n (diag p - p p^T), and the counts still add up to n.
        double proj = 0;
        for (int64_t e = 0; e < experts_; ++e) {
          z[size_t(e)] = rng.normal();
          proj += std::sqrt(p[size_t(e)]) * z[size_t(e)];
        }
        double sum = 0;
        for (int64_t e = 0; e < experts_; ++e) {
          const double pe = p[size_t(e)];
          const double c = n * pe + std::sqrt(n) * (std::sqrt(pe) * z[size_t(e)] - pe * proj);
          count[size_t(e)] = std::max(0.0, c);
          sum += count[size_t(e)];
        }
        for (double& c : count) c /= sum;
      }
      // Megatron's capacity: an expert keeps at most C times its mean rows (C / E of the group's),
      // or, padded, exactly that many.
      if (plan.parallel.moe_capacity_factor > 0) {
        const double cap = plan.parallel.moe_capacity_factor / double(experts_);
        for (double& c : count) c = plan.parallel.moe_pad_to_capacity ? cap : std::min(c, cap);
      }
      const size_t row = size_t(l * microbatches_ + mb);
      std::copy(count.begin(), count.end(), expert_.begin() + std::ptrdiff_t(row * size_t(experts_)));
      for (int64_t e = 0; e < experts_; ++e) slot_[row * size_t(ep_) + size_t(e / per_slot)] += count[size_t(e)];
    }
  }
}

}  // namespace stepsim
