#include "workloads/routing/expert_popularity.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "workloads/routing/load_file.hpp"
#include "vocabulary/seeded_random.hpp"

namespace stepsim {

namespace {

// Streams of scenario.seed used here (see SeededRandom).
constexpr uint64_t kStreamShared = 1, kStreamLayer = 2, kStreamDirichlet = 3;

void normalise(std::vector<double>& v) {
  const double sum = std::accumulate(v.begin(), v.end(), 0.0);
  if (!(sum > 0)) {  // every draw underflowed (alpha ~ 0): all rows on the first
    std::fill(v.begin(), v.end(), 0.0);
    v[0] = 1.0;
    return;
  }
  for (double& x : v) x /= sum;
}

// Experts of each layer in decreasing latent score.
std::vector<std::vector<int64_t>> popularity_order(const Plan& plan) {
  const int64_t experts = plan.model.n_routed_experts, layers = plan.model.moe_layers();
  const double c = plan.scenario.layer_correlation;
  SeededRandom shared_rng(plan.scenario.seed, kStreamShared), layer_rng(plan.scenario.seed, kStreamLayer);
  std::vector<double> shared(static_cast<size_t>(experts)), score(static_cast<size_t>(experts));
  for (double& a : shared) a = shared_rng.normal();
  std::vector<std::vector<int64_t>> order(static_cast<size_t>(layers));
  for (auto& o : order) {
    for (int64_t e = 0; e < experts; ++e)
      score[size_t(e)] = std::sqrt(c) * shared[size_t(e)] + std::sqrt(1.0 - c) * layer_rng.normal();
    o.resize(size_t(experts));
    std::iota(o.begin(), o.end(), int64_t(0));
    std::stable_sort(o.begin(), o.end(), [&](int64_t a, int64_t b) { return score[size_t(a)] > score[size_t(b)]; });
  }
  return order;
}

}  // namespace

std::vector<double> zipf_profile(int64_t experts, double s) {
  std::vector<double> p(static_cast<size_t>(experts));
  for (int64_t r = 0; r < experts; ++r) p[size_t(r)] = std::pow(double(r + 1), -s);
  normalise(p);
  return p;
}

std::vector<double> hot_profile(int64_t experts, int64_t hot, double share) {
  if (hot >= experts) return std::vector<double>(size_t(experts), 1.0 / double(experts));
  std::vector<double> p(size_t(experts), (1.0 - share) / double(experts - hot));
  std::fill(p.begin(), p.begin() + hot, share / double(hot));
  return p;
}

std::vector<std::vector<double>> expert_popularity(const Plan& plan) {
  const ScenarioConfig& s = plan.scenario;
  const int64_t experts = plan.model.n_routed_experts, layers = plan.model.moe_layers();
  const std::vector<double> uniform(size_t(experts), 1.0 / double(experts));
  switch (s.routing) {
    case Routing::Balanced:
    case Routing::DeepSeek: return std::vector<std::vector<double>>(size_t(layers), uniform);
    case Routing::File: return read_load_file(plan);
    default: break;
  }
  const auto order = popularity_order(plan);
  SeededRandom dirichlet_rng(s.seed, kStreamDirichlet);
  std::vector<std::vector<double>> out(static_cast<size_t>(layers), std::vector<double>(static_cast<size_t>(experts)));
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<double> profile;
    if (s.routing == Routing::Zipf) {
      profile = zipf_profile(experts, s.zipf_s);
    } else if (s.routing == Routing::Hot) {
      profile = hot_profile(experts, s.hot_experts, s.hot_share);
    } else {  // Dirichlet: normalised Gamma(alpha) draws, largest to the top-ranked expert
      profile.resize(size_t(experts));
      for (double& g : profile) g = dirichlet_rng.gamma(s.dirichlet_alpha);
      std::sort(profile.begin(), profile.end(), std::greater<>());
      normalise(profile);
    }
    for (int64_t r = 0; r < experts; ++r) out[size_t(l)][size_t(order[size_t(l)][size_t(r)])] = profile[size_t(r)];
  }
  return out;
}

}  // namespace stepsim
