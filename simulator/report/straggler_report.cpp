#include "simulator/report/straggler_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "platforms/topology.hpp"

namespace stepsim {
namespace {

// A leaf-spine cable item: the cable, and what is left of its leaf's uplinks (traffic spreads over
// the leaf's other spines, so each NIC's uplink share shrinks by the lost capacity).
struct CableState {
  std::string link;
  double leaf_uplink_share = 1;  // of the leaf's uplink capacity, while the item acts
  double nic_uplink_GBps = 0;    // each NIC's share of what is left
};

CableState cable_state(const Plan& plan, const Straggler& s) {
  const FabricShape f = FabricShape::of(plan);
  CableState c;
  c.link = leaf_spine_link_name(s.leaf, s.spine);
  const double share = plan.hardware.ib_GBps / plan.cluster.oversubscription;
  const double cable = share * double(f.leaf_nics) / double(f.spines());
  const double left = s.link_down ? 0.0 : std::min(cable, s.link_GBps);
  c.leaf_uplink_share = (cable * double(f.spines() - 1) + left) / (cable * double(f.spines()));
  c.nic_uplink_GBps = share * c.leaf_uplink_share;
  return c;
}

nlohmann::json item_json(const Plan& plan, const Straggler& s) {
  nlohmann::json j;
  if (s.leaf >= 0) {
    const CableState c = cable_state(plan, s);
    j["link"] = c.link;
    j["leaf"] = s.leaf;
    j["spine"] = s.spine;
    j["link_GBps"] = s.link_GBps > 0 ? nlohmann::json(s.link_GBps) : nlohmann::json(nullptr);
    j["link_down"] = s.link_down;
    j["leaf_uplink_share"] = c.leaf_uplink_share;
    j["nic_uplink_GBps"] = c.nic_uplink_GBps;
    j["from_s"] = s.from_s;
    j["to_s"] = std::isfinite(s.to_s) ? nlohmann::json(s.to_s) : nlohmann::json(nullptr);
    return j;
  }
  if (s.gpu >= 0) j["gpu"] = s.gpu;
  if (s.node >= 0) j["node"] = s.node;
  j["clock"] = s.clock;
  j["nic_GBps"] = s.nic_GBps > 0 ? nlohmann::json(s.nic_GBps) : nlohmann::json(nullptr);
  j["nvlink_GBps"] = s.nvlink_GBps > 0 ? nlohmann::json(s.nvlink_GBps) : nlohmann::json(nullptr);
  j["nic_down"] = s.nic_down;
  j["from_s"] = s.from_s;
  j["to_s"] = std::isfinite(s.to_s) ? nlohmann::json(s.to_s) : nlohmann::json(nullptr);
  return j;
}

}  // namespace

nlohmann::json stragglers_json(const Plan& plan, const SimResult& r) {
  const StragglerReport& s = r.stragglers;
  nlohmann::json j;
  j["configured"] = nlohmann::json::array();
  for (const Straggler& item : plan.scenario.stragglers) j["configured"].push_back(item_json(plan, item));
  j["jitter_sigma"] = plan.scenario.jitter_sigma;
  const bool has_base = s.baseline_step_s > 0;
  j["baseline_step_s"] = has_base ? nlohmann::json(s.baseline_step_s) : nlohmann::json(nullptr);
  j["step_impact_s"] = has_base ? nlohmann::json(r.step_time_s - s.baseline_step_s) : nlohmann::json(nullptr);
  j["slowdown"] = has_base ? nlohmann::json(r.step_time_s / s.baseline_step_s - 1.0) : nlohmann::json(nullptr);
  j["waited_for"] = nlohmann::json::array();
  for (const WaitedFor& w : s.waited_for)
    j["waited_for"].push_back({{"gpu", w.gpu}, {"waited_s", w.waited_s}, {"ranks", w.ranks}});
  j["root_causes"] = nlohmann::json::array();
  for (const WaitedFor& w : s.root_causes)
    j["root_causes"].push_back({{"gpu", w.gpu}, {"waited_s", w.waited_s}, {"ranks", w.ranks}});
  j["rank_waits"] = nlohmann::json::array();
  for (const RankWait& w : s.rank_waits)
    j["rank_waits"].push_back({{"rank", w.rank},
                               {"peer", w.peer >= 0 ? nlohmann::json(w.peer) : nlohmann::json(nullptr)},
                               {"waited_s", w.waited_s},
                               {"total_s", w.total_s},
                               {"root", w.root >= 0 ? nlohmann::json(w.root) : nlohmann::json(nullptr)},
                               {"root_s", w.root_s}});
  j["nic_detours"] = nlohmann::json::array();
  for (const NicDetour& d : s.detours)
    j["nic_detours"].push_back({{"gpu", d.gpu}, {"via", d.via}, {"rerouted_bytes", d.bytes}});
  j["rerouted_bytes"] = s.rerouted_bytes;
  return j;
}

std::string stragglers_text(const Plan& plan, const SimResult& r) {
  if (!plan.scenario.perturbed()) return "";
  const StragglerReport& s = r.stragglers;
  std::string out = fmt::format("\nstragglers: {} item(s), jitter sigma {}", plan.scenario.stragglers.size(),
                                plan.scenario.jitter_sigma);
  if (s.baseline_step_s > 0)
    out += fmt::format("; step {:.6g} s vs {:.6g} s unperturbed ({:+.2f} %)", r.step_time_s, s.baseline_step_s,
                       100.0 * (r.step_time_s / s.baseline_step_s - 1.0));
  out += "\n";
  const auto list = [&](const char* what, const std::vector<WaitedFor>& v) {
    if (v.empty()) return;
    out += fmt::format("  {} (GPU: seconds, by how many GPUs):", what);
    for (size_t i = 0; i < v.size() && i < 5; ++i) out += fmt::format(" {}: {:.4g} s ({})", v[i].gpu, v[i].waited_s, v[i].ranks);
    out += "\n";
  };
  list("waited on directly", s.waited_for);
  list("waits trace back to", s.root_causes);
  for (const NicDetour& d : s.detours)
    out += fmt::format("  NIC of GPU {} down: {:.4g} GB rerouted through GPU {}'s NIC\n", d.gpu, d.bytes / 1e9, d.via);
  for (const Straggler& item : plan.scenario.stragglers) {
    if (item.leaf < 0) continue;
    const CableState c = cable_state(plan, item);
    out += fmt::format("  cable {} {}: leaf {}'s traffic spreads over its other spines; its uplinks at {:.1f} %, "
                       "each NIC's share {:.4g} GB/s\n",
                       c.link, item.link_down ? "down" : fmt::format("at {:g} GB/s", item.link_GBps), item.leaf,
                       100.0 * c.leaf_uplink_share, c.nic_uplink_GBps);
  }
  return out;
}

}  // namespace stepsim
