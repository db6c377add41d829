#include "platforms/degraded_hardware.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

namespace stepsim {
namespace {

bool is_link_item(const Straggler& s) { return s.leaf >= 0; }

bool acts_on(const Straggler& s, const PlatformSpec& spec, int64_t gpu) {
  if (is_link_item(s)) return spec.shape().leaf_of(gpu) == s.leaf;
  return s.gpu == gpu || (s.node >= 0 && s.node == gpu / spec.gpus_per_node);
}

// Samples `value_at(t)` at every window edge of the stragglers acting on `gpu` that set a value
// (`has`); consecutive equal values merge. Empty when nothing acts on the GPU.
Timeline timeline(const PlatformSpec& spec, int64_t gpu, const std::function<bool(const Straggler&)>& has,
                  const std::function<double(double)>& value_at) {
  std::vector<double> edges = {0.0};
  for (const Straggler& s : spec.stragglers) {
    if (!acts_on(s, spec, gpu) || !has(s)) continue;
    edges.push_back(s.from_s);
    if (std::isfinite(s.to_s)) edges.push_back(s.to_s);
  }
  if (edges.size() == 1) return {};
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  Timeline t;
  for (double at : edges) {
    const double v = value_at(at);
    if (t.empty() || t.back().second != v) t.emplace_back(at, v);
  }
  return t;
}

bool active(const Straggler& s, double t) { return s.from_s <= t && t < s.to_s; }

Timeline bandwidth(const PlatformSpec& spec, int64_t gpu, double Straggler::*field, double base_Bps) {
  return timeline(
      spec, gpu, [&](const Straggler& s) { return s.*field > 0; },
      [&](double t) {
        double bw = base_Bps;
        for (const Straggler& s : spec.stragglers)
          if (acts_on(s, spec, gpu) && s.*field > 0 && active(s, t)) bw = std::min(bw, s.*field * 1e9);
        return bw;
      });
}

}  // namespace

Timeline gpu_speed_factor(const PlatformSpec& spec, int64_t gpu) {
  return timeline(
      spec, gpu, [](const Straggler& s) { return s.clock != 1; },
      [&](double t) {
        double f = 1;
        for (const Straggler& s : spec.stragglers)
          if (acts_on(s, spec, gpu) && active(s, t)) f *= s.clock;
        return f;
      });
}

Timeline nic_bandwidth(const PlatformSpec& spec, int64_t gpu) { return bandwidth(spec, gpu, &Straggler::nic_GBps, spec.ib_Bps); }

Timeline nvlink_bandwidth(const PlatformSpec& spec, int64_t gpu) {
  return bandwidth(spec, gpu, &Straggler::nvlink_GBps, spec.nvlink_Bps);
}

Timeline uplink_bandwidth(const PlatformSpec& spec, int64_t gpu) {
  const FabricShape f = spec.shape();
  const double share = spec.ib_Bps / spec.oversubscription;
  // Each of the leaf's spines() cables carries an equal part of its uplink capacity.
  const double cable = share * double(f.leaf_nics) / double(f.spines());
  return timeline(
      spec, gpu, [](const Straggler& s) { return is_link_item(s); },
      [&](double t) {
        // Per cable the lowest acting value; the leaf's capacity is the sum over its cables.
        std::vector<double> cables(size_t(f.spines()), cable);
        for (const Straggler& s : spec.stragglers)
          if (is_link_item(s) && acts_on(s, spec, gpu) && active(s, t) && s.spine < f.spines()) {
            double& c = cables[size_t(s.spine)];
            c = std::min(c, s.link_down ? 0.0 : s.link_GBps * 1e9);
          }
        double sum = 0;
        for (double c : cables) sum += c;
        return share * sum / (cable * double(f.spines()));
      });
}

std::vector<int64_t> nic_detours(const PlatformSpec& spec) {
  const int64_t G = spec.gpus_per_node;
  std::vector<int64_t> via(size_t(spec.nodes * G), -1);
  std::vector<bool> down(via.size(), false);
  for (const Straggler& s : spec.stragglers)
    if (s.nic_down && s.gpu >= 0 && s.gpu < int64_t(via.size())) down[size_t(s.gpu)] = true;
  for (const Straggler& s : spec.stragglers) {
    if (!s.nic_down || s.gpu < 0 || s.gpu >= int64_t(via.size())) continue;
    int64_t v = s.via;
    // Default: the next GPU of the node (wrapping) whose NIC works.
    for (int64_t step = 1; v < 0 && step < G; ++step) {
      const int64_t cand = s.gpu / G * G + (s.gpu % G + step) % G;
      if (!down[size_t(cand)]) v = cand;
    }
    via[size_t(s.gpu)] = v;
  }
  return via;
}

std::string profile_text(const Timeline& t) {
  std::string out;
  for (const auto& [at, v] : t) out += fmt::format("{:.17g} {:.17g}\n", at, v);
  return out;
}

}  // namespace stepsim
