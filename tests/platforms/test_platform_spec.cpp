// The platform description without a simulation: spec from a plan, names, validation, the XML text
// and the committed platforms/h800-256x8.xml.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "platforms/cluster_platform.hpp"
#include "platform_test_support.hpp"

namespace stepsim {
namespace {

Plan h800_plan(int64_t nodes, int64_t gpus_per_node, int64_t comm_sms) {
  Plan plan;
  plan.hardware.name = "H800";
  plan.hardware.fp8_tflops = 1456.6;
  plan.hardware.bf16_tflops = 728.3;
  plan.hardware.ib_GBps = 50;
  plan.hardware.nvlink_GBps = 160;
  plan.hardware.sms = 132;
  plan.hardware.comm_sms = comm_sms;
  plan.cluster.nodes = nodes;
  plan.cluster.gpus_per_node = gpus_per_node;
  // An MoE model with an EP all-to-all: the only plans whose compute pays the SM tax.
  plan.model.n_routed_experts = 256;
  plan.parallel.ep = 64;
  return plan;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + what.size())) ++n;
  return n;
}

TEST(PlatformSpec, FromPlan) {
  Plan plan = h800_plan(256, 8, 20);
  plan.hardware.ib_latency_s = 3e-6;
  plan.hardware.nvlink_latency_s = 1e-6;
  const PlatformSpec s = platform_spec(plan);
  EXPECT_EQ(s.nodes, 256);
  EXPECT_EQ(s.gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(s.gpu_flops, 1.4566e15);
  EXPECT_DOUBLE_EQ(s.comm_speed_factor, 112.0 / 132.0);
  EXPECT_DOUBLE_EQ(s.ib_Bps, 5e10);
  EXPECT_DOUBLE_EQ(s.nvlink_Bps, 1.6e11);
  EXPECT_DOUBLE_EQ(s.ib_latency_s, 3e-6);
  EXPECT_DOUBLE_EQ(s.nvlink_latency_s, 1e-6);
  EXPECT_EQ(s.gpu_name, "H800");
}

TEST(PlatformSpec, NoCommSmsMeansNoSlowdown) {
  EXPECT_DOUBLE_EQ(platform_spec(h800_plan(2, 8, 0)).comm_speed_factor, 1.0);
}

TEST(PlatformSpec, NoEpAllToAllMeansNoSmTax) {
  // DeepEP's SMs are charged only where its all-to-all runs: not to a dense model, nor at EP 1.
  Plan dense = h800_plan(2, 8, 20);
  dense.model.n_routed_experts = 0;
  dense.parallel.ep = 1;
  EXPECT_DOUBLE_EQ(platform_spec(dense).comm_speed_factor, 1.0);
  Plan ep1 = h800_plan(2, 8, 20);
  ep1.parallel.ep = 1;
  EXPECT_DOUBLE_EQ(platform_spec(ep1).comm_speed_factor, 1.0);
}

TEST(PlatformSpec, Names) {
  EXPECT_EQ(gpu_host_name(0, 0), "n0g0");
  EXPECT_EQ(gpu_host_name(255, 7), "n255g7");
  EXPECT_EQ(nvlink_link_name(12, 3), "nvl-n12g3");
  EXPECT_EQ(ib_link_name(12, 3), "ib-n12g3");
}

TEST(PlatformSpec, ValidationRejectsImpossiblePlatforms) {
  const PlatformSpec good = test::h800_spec(2, 8);
  EXPECT_NO_THROW(validate_platform_spec(good));
  auto bad = [&](auto change) {
    PlatformSpec s = good;
    change(s);
    return s;
  };
  EXPECT_THROW(validate_platform_spec(bad([](PlatformSpec& s) { s.nodes = 0; })), std::invalid_argument);
  EXPECT_THROW(validate_platform_spec(bad([](PlatformSpec& s) { s.gpus_per_node = 0; })), std::invalid_argument);
  EXPECT_THROW(validate_platform_spec(bad([](PlatformSpec& s) { s.gpu_flops = 0; })), std::invalid_argument);
  EXPECT_THROW(validate_platform_spec(bad([](PlatformSpec& s) { s.comm_speed_factor = 0; })), std::invalid_argument);
  EXPECT_THROW(validate_platform_spec(bad([](PlatformSpec& s) { s.comm_speed_factor = 1.5; })), std::invalid_argument);
  EXPECT_THROW(validate_platform_spec(bad([](PlatformSpec& s) { s.ib_Bps = -1; })), std::invalid_argument);
  EXPECT_THROW(validate_platform_spec(bad([](PlatformSpec& s) { s.nvlink_Bps = 0; })), std::invalid_argument);
  EXPECT_THROW(validate_platform_spec(bad([](PlatformSpec& s) { s.ib_latency_s = -1e-6; })), std::invalid_argument);
  // One GPU per node needs no NVLink.
  EXPECT_NO_THROW(validate_platform_spec(bad([](PlatformSpec& s) {
    s.gpus_per_node = 1;
    s.nvlink_Bps = 0;
  })));
  Plan plan = h800_plan(2, 8, 0);
  plan.hardware.sms = 0;
  EXPECT_THROW(platform_spec(plan), std::invalid_argument);
  EXPECT_THROW(platform_xml(bad([](PlatformSpec& s) { s.nodes = 0; })), std::invalid_argument);
}

TEST(PlatformXml, DeclaresEveryResourceOnce) {
  const int64_t N = 3, G = 4;
  const std::string xml = platform_xml(test::h800_spec(N, G));
  EXPECT_EQ(count(xml, "<host id="), size_t(N * G));
  EXPECT_EQ(count(xml, "<link id=\"nvl-"), size_t(N * G));
  EXPECT_EQ(count(xml, "<link id=\"ib-"), size_t(N * G));
  EXPECT_EQ(count(xml, "<host_link "), size_t(N * G));
  // Every ordered pair of GPUs inside a node, a GPU with itself included.
  EXPECT_EQ(count(xml, "<bypassRoute "), size_t(N * G * G));
  EXPECT_NE(xml.find("<platform version=\"4.1\">"), std::string::npos);
  EXPECT_NE(xml.find("<host id=\"n2g3\" speed=\"1.4566e+15f,1.4566e+15f\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<link id=\"ib-n1g2\" bandwidth=\"5e+10Bps\" latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>"),
            std::string::npos);
}

TEST(PlatformXml, OneGpuPerNodeHasNoNvlink) {
  const std::string xml = platform_xml(test::h800_spec(4, 1));
  EXPECT_EQ(count(xml, "<host id="), 4u);
  EXPECT_EQ(count(xml, "\"nvl-"), 0u);
}

TEST(PlatformXml, CommittedFileIsUpToDate) {
  const std::string path = std::string(STEPSIM_SOURCE_DIR) + "/platforms/h800-256x8.xml";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing " << path;
  std::ostringstream text;
  text << in.rdbuf();
  const std::string expected = platform_xml(platform_spec(h800_plan(256, 8, 0)));
  EXPECT_TRUE(text.str() == expected) << path << " differs from platform_xml(); regenerate it";
  EXPECT_LT(text.str().size(), size_t(6) << 20);
}

}  // namespace
}  // namespace stepsim
