#include "simulator/engine/perturbations.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "platforms/degraded_hardware.hpp"

namespace stepsim::engine {

namespace {
constexpr uint64_t kJitterStream = 0x4a49545445520000ULL;  // "JITTER": apart from the routing draws
constexpr double kJoinTolerance_s = 1e-12;
}  // namespace

void Perturbations::init(const PlatformSpec& spec, double jitter_sigma, uint64_t seed) {
  const size_t gpus = size_t(spec.nodes * spec.gpus_per_node);
  sigma_ = jitter_sigma;
  seed_ = seed;
  gpus_per_node_ = spec.shape().nvlink_ranks;  // GPUs reaching each other over NVLink only
  rng_.resize(sigma_ > 0 ? gpus : 0);
  waits_.assign(gpus, {});
  roots_.assign(gpus, {});
  running_root_.resize(gpus);
  for (size_t g = 0; g < gpus; ++g) running_root_[g] = int32_t(g);
  done_root_ = running_root_;
  pending_root_.assign(gpus, -1);
  idle_since_.assign(gpus, -1.0);
  via_ = nic_detours(spec);
  rerouted_.assign(gpus, 0.0);
}

double Perturbations::jitter(uint32_t gpu) {
  if (sigma_ <= 0) return 1.0;
  auto& rng = rng_[gpu];
  if (!rng) rng = std::make_unique<SeededRandom>(seed_, kJitterStream | gpu);
  return std::exp(sigma_ * rng->normal() - 0.5 * sigma_ * sigma_);
}

void Perturbations::add_wait(uint32_t gpu, uint32_t on, double s) {
  waits_[gpu][on] += s;
  // The peer's latest op was late because of its own root (itself unless it waited too).
  const int32_t root = done_root_[on] == int32_t(gpu) ? int32_t(on) : done_root_[on];
  roots_[gpu][uint32_t(root)] += s;
  pending_root_[gpu] = root;
}

void Perturbations::waited(uint32_t gpu, uint32_t on, double s) {
  if (s > kJoinTolerance_s && on != gpu) add_wait(gpu, on, s);
}

void Perturbations::compute_starts(uint32_t gpu) {
  running_root_[gpu] = pending_root_[gpu] >= 0 ? pending_root_[gpu] : int32_t(gpu);
  pending_root_[gpu] = -1;
}

void Perturbations::comm_joined(uint32_t gpu, const std::vector<FlowSpec>& flows,
                                const std::vector<simgrid::s4u::CommPtr>& comms, double posted) {
  // The kernel waits for the last peer to join; that peer is the one it waited on.
  if (idle_since_[gpu] < 0) return;
  const double from = std::max(posted, idle_since_[gpu]);
  double latest = from;
  int64_t peer = -1;
  for (size_t i = 0; i < comms.size() && i < flows.size(); ++i) {
    const double joined = comms[i]->get_start_time();
    if (joined > latest + kJoinTolerance_s) {
      latest = joined;
      peer = flows[i].peer;
    }
  }
  if (peer >= 0 && uint32_t(peer) != gpu) add_wait(gpu, uint32_t(peer), latest - from);
}

void Perturbations::flow_sent(uint32_t src, uint32_t dst, double bytes) {
  if (src / gpus_per_node_ == dst / gpus_per_node_) return;  // NVLink only
  if (via_[src] >= 0)
    rerouted_[src] += bytes;
  else if (via_[dst] >= 0)
    rerouted_[dst] += bytes;
}

namespace {

// Per waiting GPU a map (GPU waited on -> seconds): the largest entry of each simulated GPU (lowest
// id on ties, whatever the hash order) and the totals per GPU waited on, most first.
void summarise(const std::vector<std::unordered_map<uint32_t, double>>& waits, const std::vector<bool>& simulated,
               const std::function<void(size_t, uint32_t, double, double)>& per_rank, std::vector<WaitedFor>& totals) {
  std::map<uint32_t, WaitedFor> on;
  for (size_t g = 0; g < waits.size(); ++g) {
    if (!simulated[g]) continue;
    std::vector<std::pair<uint32_t, double>> peers(waits[g].begin(), waits[g].end());
    std::sort(peers.begin(), peers.end());
    double total = 0, most = 0;
    int64_t who = -1;
    for (const auto& [peer, s] : peers) {
      total += s;
      if (s > most) {
        most = s;
        who = peer;
      }
      WaitedFor& f = on[peer];
      f.gpu = peer;
      f.waited_s += s;
      ++f.ranks;
    }
    per_rank(g, uint32_t(who), most, total);
  }
  for (const auto& [gpu, f] : on) totals.push_back(f);
  std::stable_sort(totals.begin(), totals.end(), [](const WaitedFor& a, const WaitedFor& b) { return a.waited_s > b.waited_s; });
  if (totals.size() > 16) totals.resize(16);
}

}  // namespace

StragglerReport Perturbations::report(const std::vector<bool>& simulated) const {
  StragglerReport r;
  summarise(waits_, simulated, [&](size_t g, uint32_t peer, double most, double total) {
    RankWait w;
    w.rank = int64_t(g);
    w.peer = most > 0 ? int64_t(peer) : -1;
    w.waited_s = most;
    w.total_s = total;
    r.rank_waits.push_back(w);
  }, r.waited_for);
  size_t i = 0;
  summarise(roots_, simulated, [&](size_t, uint32_t root, double most, double) {
    r.rank_waits[i].root = most > 0 ? int64_t(root) : -1;
    r.rank_waits[i++].root_s = most;
  }, r.root_causes);
  for (size_t g = 0; g < via_.size(); ++g) {
    if (via_[g] < 0) continue;
    r.detours.push_back({int64_t(g), via_[g], rerouted_[g]});
    r.rerouted_bytes += rerouted_[g];
  }
  return r;
}

}  // namespace stepsim::engine
