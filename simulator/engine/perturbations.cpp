#include "simulator/engine/perturbations.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "platforms/degraded_hardware.hpp"
#include "platforms/topology.hpp"
#include "vocabulary/op_sink.hpp"

namespace stepsim::engine {

using namespace stepsim::ops;

namespace {
constexpr uint64_t kJitterStream = 0x4a49545445520000ULL;  // "JITTER": apart from the routing draws
constexpr double kJoinTolerance_s = 1e-12;

// The windows in which a bandwidth timeline (platforms/degraded_hardware.hpp: pairs from 0 on, each
// value holding until the next) is below the port's healthy bandwidth `base_Bps`.
std::vector<std::pair<double, double>> slow_windows(const Timeline& t, double base_Bps) {
  std::vector<std::pair<double, double>> w;
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i].second < base_Bps)
      w.emplace_back(t[i].first, i + 1 < t.size() ? t[i + 1].first : std::numeric_limits<double>::infinity());
  return w;
}
}  // namespace

void Perturbations::init(const PlatformSpec& spec, double jitter_sigma, uint64_t seed) {
  const size_t gpus = size_t(spec.nodes * spec.gpus_per_node);
  sigma_ = jitter_sigma;
  seed_ = seed;
  gpus_per_node_ = spec.shape().nvlink_ranks;  // GPUs reaching each other over NVLink only
  rng_.resize(sigma_ > 0 ? gpus : 0);
  waits_.assign(gpus, {});
  roots_.assign(gpus, {});
  last_.assign(gpus, {});
  started_.assign(gpus, {});
  pending_.assign(gpus, {});
  running_.assign(gpus, {});
  root_history_.assign(gpus, {});
  via_ = nic_detours(spec);
  rerouted_.assign(gpus, 0.0);
  nic_faults_.assign(gpus, {});
  nvlink_faults_.assign(gpus, {});
  const double always = std::numeric_limits<double>::infinity();
  for (size_t g = 0; g < gpus; ++g) {
    if (auto w = slow_windows(nic_bandwidth(spec, int64_t(g)), spec.ib_Bps); !w.empty()) nic_faults_[g] = {int64_t(g), w};
    if (auto w = slow_windows(nvlink_bandwidth(spec, int64_t(g)), spec.nvlink_Bps); !w.empty())
      nvlink_faults_[g] = {int64_t(g), w};
  }
  // A NIC that is down is faulty all step, and so, by its fault, is the NIC that carries its traffic.
  for (size_t g = 0; g < gpus; ++g) {
    if (via_[g] < 0) continue;
    nic_faults_[g] = {int64_t(g), {{0.0, always}}};
    if (nic_faults_[size_t(via_[g])].culprit < 0) nic_faults_[size_t(via_[g])] = {int64_t(g), {{0.0, always}}};
  }
  shape_ = spec.shape();
  uplink_faults_.clear();
  for (size_t g = 0; g < gpus; ++g) {
    const Timeline t = uplink_bandwidth(spec, int64_t(g));
    if (t.empty()) continue;
    if (uplink_faults_.empty()) uplink_faults_.assign(gpus, {});
    if (auto w = slow_windows(t, spec.ib_Bps / spec.oversubscription); !w.empty()) uplink_faults_[g] = {int64_t(g), w};
  }
  perturbed_.assign(gpus, sigma_ > 0);
  for (size_t g = 0; g < gpus; ++g)
    if (!gpu_speed_factor(spec, int64_t(g)).empty() || !uplink_bandwidth(spec, int64_t(g)).empty() ||
        nic_faults_[g].culprit == int64_t(g) || nvlink_faults_[g].culprit == int64_t(g))
      perturbed_[g] = true;
}

int64_t Perturbations::flow_culprit(uint32_t gpu, uint32_t peer, double from, double to) const {
  const auto& faults = gpu / gpus_per_node_ == peer / gpus_per_node_ ? nvlink_faults_ : nic_faults_;
  for (const uint32_t end : {gpu, peer}) {
    const PortFault& f = faults[end];
    for (const auto& [a, b] : f.windows)
      if (a < to && from < b) return f.culprit;
  }
  if (uplink_faults_.empty() || gpu / gpus_per_node_ == peer / gpus_per_node_) return -1;
  for (const Hop& h : route_between(shape_, via_, gpu, peer)) {
    if (h.kind != LinkKind::Uplink) continue;
    const PortFault& f = uplink_faults_[size_t(h.gpu)];
    for (const auto& [a, b] : f.windows)
      if (a < to && from < b) return f.culprit;
  }
  return -1;
}

bool Perturbations::any() const { return std::find(perturbed_.begin(), perturbed_.end(), true) != perturbed_.end(); }

double Perturbations::jitter(uint32_t gpu) {
  if (sigma_ <= 0) return 1.0;
  auto& rng = rng_[gpu];
  if (!rng) rng = std::make_unique<SeededRandom>(seed_, kJitterStream | gpu);
  return std::exp(sigma_ * rng->normal() - 0.5 * sigma_ * sigma_);
}

void Perturbations::add_wait(uint32_t gpu, uint32_t on, double s, int32_t root) {
  waits_[gpu][on] += s;
  // Root causes are perturbed GPUs (slow, jittered, behind a faulty port or cable): a wait that
  // traces back to a healthy GPU is the schedule's own (a pipeline neighbour's ordinary lateness),
  // and naming that GPU would blame hardware the fault never touched.
  if (root >= 0 && perturbed_[size_t(root)]) roots_[gpu][uint32_t(root)] += s;  // root == gpu: its own fault
}

Perturbations::Delay& Perturbations::slot(std::vector<std::vector<Delay>>& v, uint32_t gpu, uint32_t stream) {
  auto& per_stream = v[gpu];
  if (per_stream.size() <= stream) per_stream.resize(stream + 1);
  return per_stream[stream];
}

void Perturbations::note_root(uint32_t gpu, double t, int32_t root) {
  auto& h = root_history_[gpu];
  if (h.empty() ? root != int32_t(gpu) : h.back().second != root) h.emplace_back(t, root);
}

int32_t Perturbations::root_at(uint32_t gpu, double t) const {
  const auto& h = root_history_[gpu];
  const auto after = std::upper_bound(h.begin(), h.end(), t + kJoinTolerance_s,
                                      [](double x, const std::pair<double, int32_t>& e) { return x < e.first; });
  return after == h.begin() ? int32_t(gpu) : std::prev(after)->second;
}

Perturbations::Delay Perturbations::inherited(uint32_t gpu, const OpRef& dep, double from, double to) {
  const Delay d = slot(last_, dep.gpu(), dep.stream());
  if (dep.gpu() != gpu)  // another GPU's op was late: a wait on it, traced to its root
    return {int32_t(dep.gpu()), d.root >= 0 ? d.root : int32_t(dep.gpu()), from, to};
  if (d.peer < 0) return {};  // a local op that nobody else delayed
  return {d.peer, d.root, std::max(from, d.from), std::min(to, d.to)};
}

void Perturbations::compute_waited(uint32_t gpu, const OpRef& ended_on, double t0, double t1) {
  const Delay d = inherited(gpu, ended_on, t0, t1);
  if (d.peer < 0 || uint32_t(d.peer) == gpu || d.to - d.from <= kJoinTolerance_s) return;
  add_wait(gpu, uint32_t(d.peer), d.to - d.from, d.root);
  pending_[gpu] = d;
}

void Perturbations::compute_starts(uint32_t gpu, double t) {
  const Delay& prev = slot(last_, gpu, kComputeStream);
  running_[gpu] = pending_[gpu].peer >= 0 ? pending_[gpu] : carries_on(prev, t) ? prev : Delay{};
  pending_[gpu] = {};
}

void Perturbations::compute_done(uint32_t gpu, double t) {
  slot(last_, gpu, kComputeStream) = running_[gpu];
  slot(last_, gpu, kComputeStream).ended = t;
  note_root(gpu, t, running_[gpu].root >= 0 ? running_[gpu].root : int32_t(gpu));
}

void Perturbations::comm_starts(uint32_t gpu, int stream, const OpRef* ended_on, double since, double now) {
  Delay d;
  if (ended_on != nullptr && now > since + kJoinTolerance_s) {
    d = inherited(gpu, *ended_on, since, now);
  } else if (const Delay& prev = slot(last_, gpu, uint32_t(stream)); carries_on(prev, now)) {
    d = prev;  // it started as the stream's previous op ended, late because of another GPU
  }
  slot(started_, gpu, uint32_t(stream)) = d;
  if (d.root >= 0) note_root(gpu, now, d.root);
}

void Perturbations::comm_done(uint32_t gpu, int stream, const std::vector<FlowSpec>& flows,
                              const std::vector<simgrid::s4u::CommPtr>& comms, double posted, double now) {
  // The last peer to join after the flows were posted.
  double latest = posted;
  int64_t peer = -1;
  for (size_t i = 0; i < comms.size() && i < flows.size(); ++i) {
    const double joined = comms[i]->get_start_time();
    if (joined > latest + kJoinTolerance_s) {
      latest = joined;
      peer = flows[i].peer;
    }
  }
  // Once everyone had joined, the flows through another GPU's faulty port that ended after every
  // other flow kept the kernel running that much longer.
  double others_end = latest, faulty_end = latest;
  int64_t culprit = -1;
  for (size_t i = 0; i < comms.size() && i < flows.size(); ++i) {
    const double start = comms[i]->get_start_time(), end = comms[i]->get_finish_time();
    const int64_t c = flow_culprit(gpu, uint32_t(flows[i].peer), start, end);
    if (c < 0 || c == int64_t(gpu)) {
      others_end = std::max(others_end, end);
    } else if (end > faulty_end) {
      faulty_end = end;
      culprit = c;
    }
  }
  Delay& d = slot(last_, gpu, uint32_t(stream));
  if (culprit >= 0 && faulty_end > others_end + kJoinTolerance_s)
    d = {int32_t(culprit), int32_t(culprit), others_end, faulty_end};
  else if (peer >= 0 && uint32_t(peer) != gpu)  // the peer joined late because of its own root
    d = {int32_t(peer), root_at(uint32_t(peer), latest), posted, latest};
  else
    d = slot(started_, gpu, uint32_t(stream));
  d.ended = now;
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
