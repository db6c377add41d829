// cluster.topology and its keys: accepted values land in the Plan; inconsistent shapes are one
// error line naming the key and the fix.
#include <gtest/gtest.h>

#include "simulator/config/config_loader.hpp"
#include "tests/config/config_test_util.hpp"

namespace stepsim {
namespace {

using test::expect_default_rejects;

TEST(TopologyConfig, DefaultIsAStarOfNodeSizedNvlinkDomains) {
  const Plan p = load_plan(test::default_yaml());
  EXPECT_EQ(p.cluster.topology, Topology::Star);
  EXPECT_EQ(p.nvlink_ranks(), 8);
}

TEST(TopologyConfig, KeysLandInThePlan) {
  const Plan p = load_plan(test::default_yaml(), {"cluster.topology=multi-plane", "cluster.oversubscription=2",
                                                  "cluster.leaf_nics=16", "cluster.nvlink_domain=16"});
  EXPECT_EQ(p.cluster.topology, Topology::MultiPlane);
  EXPECT_EQ(p.cluster.oversubscription, 2);
  EXPECT_EQ(p.cluster.leaf_nics, 16);
  EXPECT_EQ(p.nvlink_ranks(), 16);
}

TEST(TopologyConfig, Nvl72HoldsOneEp64GroupPerRack) {
  EXPECT_EQ(load_plan(test::default_yaml(), {"cluster.nvlink_domain=72"}).nvlink_ranks(), 64);
  EXPECT_EQ(load_plan(test::default_yaml(), {"cluster.nvlink_domain=128"}).nvlink_ranks(), 128);
  // 24-GPU domains cannot hold an EP-64 group: each takes 8 GPUs of one (gcd).
  EXPECT_EQ(load_plan(test::default_yaml(), {"cluster.nvlink_domain=24"}).nvlink_ranks(), 8);
}

TEST(TopologyConfig, BadShapesAreOneLineErrors) {
  expect_default_rejects({"cluster.topology=torus"}, {"--set", "cluster.topology", "star, fat-tree, multi-plane"});
  expect_default_rejects({"cluster.oversubscription=2"}, {"cluster.topology", "fat-tree"});
  expect_default_rejects({"cluster.topology=fat-tree", "cluster.oversubscription=0.5"},
                         {"cluster.oversubscription", "at least 1"});
  expect_default_rejects({"cluster.oversubscription=-1"}, {"--set", "cluster.oversubscription", "greater than zero"});
  expect_default_rejects({"cluster.nvlink_domain=12"}, {"cluster.nvlink_domain", "multiple of cluster.gpus_per_node"});
  expect_default_rejects({"cluster.nvlink_domain=192"}, {"cluster.nvlink_domain", "does not divide the 2048 GPUs"});
  expect_default_rejects({"cluster.topology=fat-tree", "cluster.leaf_nics=12"}, {"cluster.leaf_nics", "whole nodes"});
  expect_default_rejects({"cluster.topology=fat-tree", "cluster.leaf_nics=24", "cluster.nvlink_domain=16"},
                         {"cluster.leaf_nics", "nest"});
  expect_default_rejects({"cluster.rail_optimized=yes"}, {"--set", "cluster.rail_optimized", "true or false"});
}

}  // namespace
}  // namespace stepsim
