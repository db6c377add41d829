#include "simulator/config/straggler_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "platforms/topology.hpp"
#include "vocabulary/config_error.hpp"
#include "simulator/io/json_text.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

enum class ItemKind { Id, Positive, NonNegative, Down };

struct ItemKey {
  ItemKind kind;
  const char* help;
  double min = 0, max = 0;  // numbers: accepted range (0 = none); SimGrid cannot take 1e300 x a rate
};

const std::map<std::string, ItemKey>& item_keys() {
  static const std::map<std::string, ItemKey> keys = {
      {"gpu", {ItemKind::Id, "a GPU id (node * gpus_per_node + local)"}},
      {"node", {ItemKind::Id, "a node id"}},
      {"clock", {ItemKind::Positive, "a compute speed factor such as 0.8", 1e-3, 1e3}},
      {"nic_GBps", {ItemKind::Positive, "the degraded NIC bandwidth in GB/s per direction", 1e-3, 1e6}},
      {"nvlink_GBps", {ItemKind::Positive, "the degraded NVLink bandwidth in GB/s per direction", 1e-3, 1e6}},
      {"nic", {ItemKind::Down, "down"}},
      {"leaf", {ItemKind::Id, "a leaf switch of a fat tree (README, \"Topology\")"}},
      {"spine", {ItemKind::Id, "the spine the leaf's cable goes to"}},
      {"link_GBps", {ItemKind::Positive, "the degraded leaf-spine cable bandwidth in GB/s per direction"}},
      {"link", {ItemKind::Down, "down"}},
      {"via", {ItemKind::Id, "the GPU on the same node whose NIC takes over"}},
      {"from_s", {ItemKind::NonNegative, "the window's start in simulated seconds", 0, 1e9}},
      {"to_s", {ItemKind::Positive, "the window's end in simulated seconds", 0, 1e9}},
  };
  return keys;
}

std::string describe(const json& v) {
  if (v.is_number_float() && !std::isfinite(v.get<double>()))
    return std::isnan(v.get<double>()) ? "nan" : v.get<double>() > 0 ? "inf" : "-inf";
  return io::json_text(v);
}

std::string number_text(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

std::string known_keys() {
  std::string out;
  for (const auto& [k, spec] : item_keys()) out += (out.empty() ? "" : ", ") + k;
  return out;
}

json check_item_value(const std::string& at, const ItemKey& spec, const json& v) {
  const auto fail = [&](const std::string& what) -> json { throw ConfigError(at + ": " + what); };
  switch (spec.kind) {
    case ItemKind::Id:
      if (!v.is_number_integer()) fail(std::string("expected an integer, ") + spec.help + ", got " + describe(v));
      if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int32_t>::max()))
        fail(std::string("is no id of this cluster (") + spec.help + "), got " + describe(v));
      if (v.get<int64_t>() < 0) fail(std::string("must not be negative (") + spec.help + "), got " + describe(v));
      return v;
    case ItemKind::Positive:
    case ItemKind::NonNegative: {
      if (!v.is_number()) fail(std::string("expected a number, ") + spec.help + ", got " + describe(v));
      const double x = v.get<double>();
      if (!std::isfinite(x)) fail("must be finite, got " + describe(v));
      if (spec.kind == ItemKind::Positive && x <= 0)
        fail(std::string("must be greater than zero (") + spec.help + "), got " + describe(v));
      if (x < 0) fail(std::string("must not be negative (") + spec.help + "), got " + describe(v));
      if (spec.max > 0 && (x > spec.max || (x > 0 && x < spec.min)))
        fail(std::string("must be ") + (spec.min > 0 ? "between " + number_text(spec.min) + " and " : "at most ") +
             number_text(spec.max) + " (" + spec.help + "), got " + describe(v));
      return json(x);
    }
    case ItemKind::Down:
      if (!v.is_string() || v.get<std::string>() != "down")
        fail("the only value is down (it fails and its traffic takes another path), got " + describe(v));
      return v;
  }
  return v;
}

}  // namespace

json check_straggler_list(const std::string& where, const std::string& key, const json& list) {
  if (!list.is_array())
    throw ConfigError(where + ": " + key + ": expected a list of maps, for example [{gpu: 5, clock: 0.8}], got " +
                      describe(list));
  if (list.size() > 100000)
    throw ConfigError(where + ": " + key + ": " + std::to_string(list.size()) +
                      " entries; at most 100000 (one per GPU of a large cluster)");
  json out = json::array();
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item = key + "[" + std::to_string(i) + "]";
    const json& v = list[i];
    if (!v.is_object())
      throw ConfigError(where + ": " + item + ": expected a map such as {gpu: 5, clock: 0.8}, got " + describe(v));
    json checked = json::object();
    for (const auto& [k, x] : v.items()) {
      const auto it = item_keys().find(k);
      if (it == item_keys().end())
        throw ConfigError(where + ": " + item + "." + k + ": unknown key; use " + known_keys());
      checked[k] = check_item_value(where + ": " + item + "." + k, it->second, x);
    }
    const auto fail = [&](const std::string& k, const std::string& what) {
      throw ConfigError(where + ": " + item + (k.empty() ? "" : "." + k) + ": " + what);
    };
    if (checked.contains("leaf") || checked.contains("spine")) {
      // A leaf-spine cable: slow (link_GBps) or down (link: down); nothing about GPUs.
      if (!checked.contains("leaf") || !checked.contains("spine"))
        fail("", "a cable names both ends, for example {leaf: 3, spine: 5, link: down}");
      for (const char* k : {"gpu", "node", "clock", "nic_GBps", "nvlink_GBps", "nic", "via"})
        if (checked.contains(k)) fail(k, "a leaf-spine cable item takes only link_GBps or link: down and a window");
      if (checked.contains("link_GBps") == checked.contains("link"))
        fail("", "say how the cable is hurt: link_GBps: X or link: down (one of them)");
      out.push_back(checked);
      continue;
    }
    if (checked.contains("link_GBps") || checked.contains("link"))
      fail(checked.contains("link") ? "link" : "link_GBps", "belongs to a leaf-spine cable; add leaf and spine");
    if (checked.contains("gpu") == checked.contains("node"))
      fail("", "name exactly one of gpu or node, for example {gpu: 5, clock: 0.8}");
    if (!checked.contains("clock") && !checked.contains("nic_GBps") && !checked.contains("nvlink_GBps") &&
        !checked.contains("nic"))
      fail("", "says nothing is slow; add clock, nic_GBps, nvlink_GBps or nic: down");
    const double from = checked.value("from_s", 0.0);
    const double to = checked.value("to_s", std::numeric_limits<double>::infinity());
    if (from >= to)
      fail("to_s", "the window ends (" + describe(checked["to_s"]) + ") before it starts (from_s " + describe(json(from)) +
                       "); make to_s greater than from_s");
    if (checked.contains("nic")) {
      if (!checked.contains("gpu")) fail("nic", "a node's NICs cannot all be down (no NIC would be left); name one gpu");
      if (checked.contains("from_s") || checked.contains("to_s"))
        fail("nic", "a NIC down holds for the whole step (routes are fixed); drop from_s and to_s");
      if (checked.contains("nic_GBps")) fail("nic_GBps", "a NIC that is down has no bandwidth; drop nic_GBps");
    }
    if (checked.contains("via") && !checked.contains("nic"))
      fail("via", "only a NIC that is down is routed via another GPU; add nic: down or drop via");
    out.push_back(checked);
  }
  return out;
}

std::vector<Straggler> parse_stragglers(const json& checked) {
  std::vector<Straggler> out;
  for (const json& v : checked) {
    Straggler s;
    s.gpu = v.value("gpu", int64_t(-1));
    s.node = v.value("node", int64_t(-1));
    s.clock = v.value("clock", 1.0);
    s.nic_GBps = v.value("nic_GBps", 0.0);
    s.nvlink_GBps = v.value("nvlink_GBps", 0.0);
    s.nic_down = v.contains("nic");
    s.via = v.value("via", int64_t(-1));
    s.leaf = v.value("leaf", int64_t(-1));
    s.spine = v.value("spine", int64_t(-1));
    s.link_GBps = v.value("link_GBps", 0.0);
    s.link_down = v.contains("link");
    s.from_s = v.value("from_s", 0.0);
    s.to_s = v.value("to_s", std::numeric_limits<double>::infinity());
    out.push_back(s);
  }
  return out;
}

int64_t platform_nodes(const Plan& plan) {
  return plan.workload.kind == WorkloadKind::Synthetic ? plan.parallel.pp : plan.cluster.nodes;
}
int64_t platform_gpus_per_node(const Plan& plan) {
  return plan.workload.kind == WorkloadKind::Synthetic ? 1 : plan.cluster.gpus_per_node;
}

namespace {

// Clock items acting on one GPU at once multiply (README): each factor is in [0.001, 1000], but a
// product outside that range would hand SimGrid a speed it cannot take (it aborts on one that
// underflows to 0). Checked per GPU a `gpu` item names and per node a `node` item names, at every
// window start, where the set of acting items changes.
void check_combined_clocks(const Plan& plan, int64_t per_node) {
  const auto& items = plan.scenario.stragglers;
  std::set<std::pair<int64_t, int64_t>> targets;  // (node, gpu or -1 for the node's other GPUs)
  for (const Straggler& s : items)
    if (s.leaf < 0 && s.clock != 1) targets.insert(s.gpu >= 0 ? std::make_pair(s.gpu / per_node, s.gpu) : std::make_pair(s.node, int64_t(-1)));
  for (const auto& [node, gpu] : targets) {
    const auto acts = [&, node = node, gpu = gpu](const Straggler& s) {
      return s.leaf < 0 && s.clock != 1 && (s.node == node || (gpu >= 0 && s.gpu == gpu));
    };
    for (const Straggler& at : items) {
      if (!acts(at)) continue;
      const double t = at.from_s;
      double product = 1;
      for (const Straggler& s : items)
        if (acts(s) && s.from_s <= t && t < s.to_s) product *= s.clock;
      if (product < 1e-3 || product > 1e3) {
        char numbers[96];
        std::snprintf(numbers, sizeof numbers, " at %g s multiply to %g", t, product);
        throw ConfigError(plan.source + ": scenario.stragglers: the clock factors acting on " +
                          (gpu >= 0 ? "GPU " + std::to_string(gpu) : "node " + std::to_string(node)) + numbers +
                          ", outside 0.001 to 1000; use fewer or milder items for it");
      }
    }
  }
}

}  // namespace

void validate_stragglers(const Plan& plan) {
  const ScenarioConfig& sc = plan.scenario;
  if (sc.perturbed() && plan.sim.mode == SimMode::Reduced)
    throw ConfigError(plan.source + ": sim.mode: reduced replays one replica for all, which a straggler or jitter "
                      "makes unequal; set sim.mode=full (or auto, which picks full)");
  const int64_t nodes = platform_nodes(plan), per_node = platform_gpus_per_node(plan), gpus = nodes * per_node;
  const auto where = plan.workload.kind == WorkloadKind::Synthetic
                         ? std::string(" (the synthetic pipeline puts each of its parallel.pp ranks on its own one-GPU node)")
                         : std::string();
  std::vector<bool> down(size_t(gpus), false);
  const FabricShape fabric = FabricShape::of(plan);
  std::map<int64_t, int64_t> cables_down;  // per leaf
  for (size_t i = 0; i < sc.stragglers.size(); ++i) {
    const Straggler& s = sc.stragglers[i];
    const auto fail = [&](const std::string& k, const std::string& what) {
      throw ConfigError(plan.source + ": scenario.stragglers[" + std::to_string(i) + "]." + k + ": " + what);
    };
    if (s.leaf >= 0) {
      if (!fabric.has_leaves() || plan.workload.kind == WorkloadKind::Synthetic)
        fail("leaf", "a star has no leaf switches; set cluster.topology=fat-tree or multi-plane");
      if (s.leaf >= fabric.leaves())
        fail("leaf", std::to_string(s.leaf) + " is not a leaf of the fabric; use 0 to " + std::to_string(fabric.leaves() - 1));
      if (s.spine >= fabric.spines())
        fail("spine", std::to_string(s.spine) + " is not a spine of leaf " + std::to_string(s.leaf) + "; use 0 to " +
                          std::to_string(fabric.spines() - 1) + " (leaf_nics / oversubscription cables per leaf)");
      if (s.link_down && ++cables_down[s.leaf] >= fabric.spines())
        fail("link", "every uplink of leaf " + std::to_string(s.leaf) + " would be down, cutting it off; keep one up");
      continue;
    }
    if (s.gpu >= gpus)
      fail("gpu", std::to_string(s.gpu) + " is not a GPU of the cluster; use 0 to " + std::to_string(gpus - 1) + where);
    if (s.node >= nodes)
      fail("node", std::to_string(s.node) + " is not a node of the cluster; use 0 to " + std::to_string(nodes - 1) + where);
    if (s.nic_down) {
      if (per_node < 2) fail("nic", "a one-GPU node has no other NIC to take the traffic; use nic_GBps instead" + where);
      if (down[size_t(s.gpu)]) fail("gpu", "this GPU's NIC is already down; list it once");
      down[size_t(s.gpu)] = true;
    }
  }
  for (size_t i = 0; i < sc.stragglers.size(); ++i) {
    const Straggler& s = sc.stragglers[i];
    if (!s.nic_down || s.via < 0) continue;
    const auto fail = [&](const std::string& what) {
      throw ConfigError(plan.source + ": scenario.stragglers[" + std::to_string(i) + "].via: " + what);
    };
    if (s.via >= gpus || s.via / per_node != s.gpu / per_node || s.via == s.gpu)
      fail(std::to_string(s.via) + " is not another GPU of node " + std::to_string(s.gpu / per_node) + "; use one of " +
           std::to_string(s.gpu / per_node * per_node) + " to " + std::to_string(s.gpu / per_node * per_node + per_node - 1));
    if (down[size_t(s.via)]) fail("GPU " + std::to_string(s.via) + "'s NIC is down too; pick a GPU whose NIC works");
  }
  check_combined_clocks(plan, per_node);
  const int64_t down_count = int64_t(std::count(down.begin(), down.end(), true));
  for (int64_t n = 0; n < nodes && down_count > 0; ++n) {
    bool any_up = false;
    for (int64_t l = 0; l < per_node; ++l) any_up = any_up || !down[size_t(n * per_node + l)];
    if (!any_up)
      throw ConfigError(plan.source + ": scenario.stragglers: every NIC of node " + std::to_string(n) +
                        " is down, so it cannot reach the others; keep one up");
  }
}

}  // namespace stepsim
