// Fat trees, multi-plane fabrics and NVLink domains: every route of small clusters against rules
// written out here (not the builder's own route function), from the C++ build and the XML file
// alike, and flow times against max-min closed forms.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform_test_support.hpp"

namespace stepsim {
namespace {

using test::Source;
using Names = std::vector<std::string>;

struct Case {
  Topology topology = Topology::FatTree;
  bool rails = false;
  int64_t nodes = 4, gpus_per_node = 4, leaf_nics = 8, domain = 0;
  double oversubscription = 2;
};

PlatformSpec spec_of(const Case& c) {
  PlatformSpec s = test::h800_spec(c.nodes, c.gpus_per_node);
  s.topology = c.topology;
  s.rail_optimized = c.rails;
  s.leaf_nics = c.leaf_nics;
  s.oversubscription = c.oversubscription;
  s.nvlink_ranks = c.domain;
  return s;
}

std::string host(int64_t gpu, int64_t G) { return gpu_host_name(gpu / G, gpu % G); }
std::string half(const std::string& kind, int64_t gpu, int64_t G, bool up) {
  return kind + "-" + host(gpu, G) + (up ? "_UP" : "_DOWN");
}

// The rules of docs/topology.md, restated.
Names expected_route(const Case& c, int64_t a, int64_t b) {
  const int64_t G = c.gpus_per_node, U = c.domain > 0 ? c.domain : G;
  if (a / U == b / U) return {half("nvl", a, G, true), half("nvl", b, G, false)};
  const bool rails = c.rails || c.topology == Topology::MultiPlane;
  const auto leaf = [&](int64_t gpu) {
    return rails ? (gpu / G / c.leaf_nics) * G + gpu % G : gpu / c.leaf_nics;
  };
  const int64_t leaf_nodes = rails ? c.leaf_nics : c.leaf_nics / G;
  const int64_t zone_nodes = std::max(U / G, leaf_nodes);
  const auto zone = [&](int64_t gpu) { return gpu / G / zone_nodes; };
  int64_t land = b;
  Names tail;
  if (c.topology == Topology::MultiPlane && a % G != b % G && zone(a) == zone(b)) {
    land = b / G * G + a % G;  // plane a%G's NIC on b's node, then NVLink
    tail = {half("nvl", land, G, true), half("nvl", b, G, false)};
  }
  Names r = {half("ib", a, G, true)};
  if (leaf(a) != leaf(land)) {
    r.push_back(half("up", a, G, true));
    if (zone(a) != zone(land)) {
      r.push_back("spine-z" + std::to_string(zone(a)) + "_UP");
      r.push_back("spine-z" + std::to_string(zone(land)) + "_DOWN");
    }
    r.push_back(half("up", land, G, false));
  }
  r.push_back(half("ib", land, G, false));
  r.insert(r.end(), tail.begin(), tail.end());
  return r;
}

class TopologyRoutes : public ::testing::TestWithParam<Source> {};

void expect_routes(const Case& c, Source source) {
  test::check_in_child([&] {
    auto engine = test::make_engine();
    const auto hosts = test::make_platform(*engine, spec_of(c), source);
    const int64_t n = c.nodes * c.gpus_per_node;
    ASSERT_EQ(hosts.size(), size_t(n));
    for (int64_t a = 0; a < n; ++a)
      for (int64_t b = 0; b < n; ++b) {
        if (a == b) continue;
        // Multi-plane: planes meet only inside a node; across zones the workload's inter-node
        // flows are rail-matched (README), so only those pairs have a defined route there.
        if (c.topology == Topology::MultiPlane && a % c.gpus_per_node != b % c.gpus_per_node) {
          const int64_t zn = std::max((c.domain > 0 ? c.domain : c.gpus_per_node) / c.gpus_per_node, c.leaf_nics);
          if (a / c.gpus_per_node / zn != b / c.gpus_per_node / zn) continue;
        }
        EXPECT_EQ(test::route_names(hosts[size_t(a)], hosts[size_t(b)]), expected_route(c, a, b))
            << host(a, c.gpus_per_node) << " -> " << host(b, c.gpus_per_node);
      }
  });
}

TEST_P(TopologyRoutes, FatTreeLeavesOfWholeNodes) { expect_routes({}, GetParam()); }

TEST_P(TopologyRoutes, FatTreeRailOptimised) {
  Case c;
  c.rails = true;
  c.leaf_nics = 2;  // NIC k of two consecutive nodes per leaf
  expect_routes(c, GetParam());
}

TEST_P(TopologyRoutes, MultiPlane) {
  Case c;
  c.topology = Topology::MultiPlane;
  c.leaf_nics = 2;
  expect_routes(c, GetParam());
  c.leaf_nics = 4;  // one zone: every cross-plane pair lands on its plane's NIC, then NVLink
  expect_routes(c, GetParam());
}

TEST_P(TopologyRoutes, NvlinkDomainOfTwoNodesOnAStar) {
  Case c;
  c.topology = Topology::Star;
  c.leaf_nics = 32;
  c.oversubscription = 1;
  c.domain = 8;  // two 4-GPU nodes share NVLink
  test::check_in_child([&] {
    auto engine = test::make_engine();
    const auto hosts = test::make_platform(*engine, spec_of(c), GetParam());
    for (int64_t a = 0; a < 16; ++a)
      for (int64_t b = 0; b < 16; ++b) {
        if (a == b) continue;
        const Names want = a / 8 == b / 8 ? Names{half("nvl", a, 4, true), half("nvl", b, 4, false)}
                                          : Names{half("ib", a, 4, true), half("ib", b, 4, false)};
        EXPECT_EQ(test::route_names(hosts[size_t(a)], hosts[size_t(b)]), want) << a << " -> " << b;
      }
  });
}

TEST_P(TopologyRoutes, NvlinkDomainAcrossLeaves) {
  Case c;
  c.leaf_nics = 4;  // one node per leaf, domains of two nodes
  c.domain = 8;
  expect_routes(c, GetParam());
}

INSTANTIATE_TEST_SUITE_P(BothSources, TopologyRoutes, ::testing::Values(Source::Cpp, Source::Xml),
                         [](const auto& info) { return std::string(test::source_name(info.param)); });

// Rail-matched transfers between GPUs on different leaves, one per GPU: each NIC's flow is held to
// its uplink share ib / oversubscription, so the time doubles at 2:1 (the spine binds).
TEST(TopologyFlows, CrossLeafTrafficRunsAtTheUplinkShare) {
  const double bytes = 1e9, ib = 50e9;
  for (const double over : {1.0, 2.0, 4.0}) {
    Case c;
    c.leaf_nics = 4;  // one node per leaf
    c.oversubscription = over;
    const auto t = test::in_child([&] {
      auto engine = test::make_engine();
      configure_exact_network(*engine);
      const auto hosts = build_platform(*engine, spec_of(c));
      std::vector<test::Flow> flows;
      for (size_t g = 0; g < 16; ++g) flows.push_back({g, (g + 4) % 16, bytes});
      return test::run_flows(*engine, hosts, flows);
    });
    ASSERT_EQ(t.size(), 16u);
    for (double x : t) EXPECT_NEAR(x, bytes / (ib / over), 1e-9) << "oversubscription " << over;
  }
}

// An all-to-all among the rail peers of four nodes, two nodes per leaf: each GPU sends X to its
// peer under the same leaf and to two peers under the other. Max-min: the two climbing flows share
// the 25 GB/s uplink share (12.5 each) and the local one takes the NIC's remaining 25; all end at
// 2X / 25 GB/s = 4X / 50, against 3X / 50 on a non-blocking fabric.
TEST(TopologyFlows, AllToAllAtTwoToOneAgainstTheClosedForm) {
  const double X = 1e9;
  const auto run = [&](Topology topo, double over) {
    Case c;
    c.topology = topo;
    c.oversubscription = over;
    if (topo == Topology::Star) c.leaf_nics = 32;
    return test::in_child([&] {
      auto engine = test::make_engine();
      configure_exact_network(*engine);
      const auto hosts = build_platform(*engine, spec_of(c));
      std::vector<test::Flow> flows;
      for (size_t node = 0; node < 4; ++node)
        for (size_t peer = 0; peer < 4; ++peer)
          if (peer != node)
            for (size_t g = 0; g < 4; ++g) flows.push_back({node * 4 + g, peer * 4 + g, X});
      return test::run_flows(*engine, hosts, flows);
    });
  };
  const auto star = run(Topology::Star, 1), tree = run(Topology::FatTree, 2);
  ASSERT_FALSE(star.empty());
  ASSERT_FALSE(tree.empty());
  EXPECT_NEAR(*std::max_element(star.begin(), star.end()), 3 * X / 50e9, 1e-9);
  EXPECT_NEAR(*std::max_element(tree.begin(), tree.end()), 4 * X / 50e9, 1e-9);
}

// Rail-optimised leaves hold NIC k of leaf_nics nodes, plain ones leaf_nics / 8 whole nodes: with 16
// nodes of 8 GPUs and stages 32 GPUs (4 nodes) apart, a pipeline send stays under its leaf only
// on the rail-optimised fabric.
TEST(TopologyRoutesPipeline, RailOptimisedKeepsPipelineSendsUnderTheirLeaf) {
  for (const bool rails : {false, true}) {
    Case c;
    c.nodes = 16;
    c.gpus_per_node = 8;
    c.leaf_nics = 32;
    c.rails = rails;
    test::check_in_child([&] {
      auto engine = test::make_engine();
      const auto hosts = build_platform(*engine, spec_of(c));
      for (int64_t g = 0; g + 32 < 128; g += 5) {
        const Names r = test::route_names(hosts[size_t(g)], hosts[size_t(g + 32)]);
        const bool climbs = std::find(r.begin(), r.end(), half("up", g, 8, true)) != r.end();
        EXPECT_EQ(climbs, !rails) << "rails " << rails << " GPU " << g;
      }
    });
  }
}

}  // namespace
}  // namespace stepsim
