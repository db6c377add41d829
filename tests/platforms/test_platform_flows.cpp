// Simulated transfer times under configure_exact_network(), against size / bandwidth worked out by
// hand, on the platform built in C++ and loaded from XML.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform_test_support.hpp"

namespace stepsim {
namespace {

using test::Flow;
using test::Source;

constexpr double S = 1e9;        // bytes per flow
constexpr double IB = 50e9;      // B/s per NIC, per direction
constexpr double NVL = 160e9;    // B/s per GPU, per direction
constexpr int64_t G = 8;

size_t gpu(int64_t node, int64_t local) { return size_t(node * G + local); }

// Runs the flows on a fresh engine (in a child process) and returns their completion times.
std::vector<double> simulate(const PlatformSpec& spec, Source source, const std::vector<Flow>& flows) {
  auto times = test::in_child([&] {
    auto engine = test::make_engine();
    configure_exact_network(*engine);
    const auto hosts = test::make_platform(*engine, spec, source);
    return test::run_flows(*engine, hosts, flows);
  });
  EXPECT_EQ(times.size(), flows.size());
  times.resize(flows.size(), -1.0);
  return times;
}

void expect_all_near(const std::vector<double>& times, double want) {
  for (size_t i = 0; i < times.size(); ++i) EXPECT_NEAR(times[i], want, want * 1e-3) << "flow " << i;
}

class PlatformFlows : public ::testing::TestWithParam<Source> {
 protected:
  PlatformSpec spec = test::h800_spec(9, G);
};

TEST_P(PlatformFlows, OneFlowAcrossNodesRunsAtNicSpeed) {
  expect_all_near(simulate(spec, GetParam(), {{gpu(0, 3), gpu(1, 5), S}}), S / IB);  // 20 ms
}

TEST_P(PlatformFlows, EightSendersIntoOneGpuShareItsNic) {
  std::vector<Flow> flows;
  for (int64_t n = 1; n <= 8; ++n) flows.push_back({gpu(n, 0), gpu(0, 0), S});
  expect_all_near(simulate(spec, GetParam(), flows), 8 * S / IB);  // 160 ms, receiver-bound
}

TEST_P(PlatformFlows, OppositeDirectionsDoNotSlowEachOther) {
  expect_all_near(simulate(spec, GetParam(), {{gpu(0, 2), gpu(4, 6), S}, {gpu(4, 6), gpu(0, 2), S}}), S / IB);
}

TEST_P(PlatformFlows, InsideANodeRunsAtNvlinkSpeed) {
  expect_all_near(simulate(spec, GetParam(), {{gpu(2, 1), gpu(2, 7), S}}), S / NVL);  // 6.25 ms
}

TEST_P(PlatformFlows, RailMatchedFlowsBetweenTwoNodesRunLikeOne) {
  std::vector<Flow> flows;
  for (int64_t i = 0; i < G; ++i) flows.push_back({gpu(3, i), gpu(7, i), S});
  expect_all_near(simulate(spec, GetParam(), flows), S / IB);
}

TEST_P(PlatformFlows, OneGpuFeedingTwoPeersSplitsItsNic) {
  expect_all_near(simulate(spec, GetParam(), {{gpu(0, 0), gpu(1, 0), S}, {gpu(0, 0), gpu(2, 0), S}}), 2 * S / IB);
}

TEST_P(PlatformFlows, LatencyIsAddedOnceEndToEnd) {
  // 1 ms is large enough that CM02's TCP window (gamma / 2·latency, 2 GB/s by default) would cap
  // the flow if configure_exact_network left it on.
  spec.ib_latency_s = 1e-3;
  spec.nvlink_latency_s = 1e-4;
  const auto t = simulate(spec, GetParam(), {{gpu(0, 0), gpu(1, 1), S}, {gpu(5, 2), gpu(5, 3), S}});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_NEAR(t[0], 1e-3 + S / IB, (1e-3 + S / IB) * 1e-3);
  EXPECT_NEAR(t[1], 1e-4 + S / NVL, (1e-4 + S / NVL) * 1e-3);
}

INSTANTIATE_TEST_SUITE_P(BothSources, PlatformFlows, ::testing::Values(Source::Cpp, Source::Xml),
                         [](const auto& info) { return std::string(test::source_name(info.param)); });

TEST(PlatformFlowsXmlVsCpp, IdenticalSimulatedTimes) {
  PlatformSpec spec = test::h800_spec(6, G);
  spec.ib_latency_s = 3e-6;
  spec.nvlink_latency_s = 1e-6;
  // A mix that shares links in several ways: incast, fan-out, opposite directions, NVLink traffic
  // next to IB traffic on the same GPUs, and sizes that end at different times.
  std::vector<Flow> flows;
  for (int64_t n = 1; n < 6; ++n) flows.push_back({gpu(n, 0), gpu(0, 0), S * double(n) / 3});
  for (int64_t n = 1; n < 6; ++n) flows.push_back({gpu(0, 0), gpu(n, n % G), 2e8 * double(n)});
  for (int64_t i = 0; i < G; ++i) flows.push_back({gpu(2, i), gpu(2, (i + 1) % G), 7e8 + 1e7 * double(i)});
  for (int64_t i = 0; i < G; ++i) flows.push_back({gpu(4, i), gpu(5, (i + 3) % G), 3e8});
  flows.push_back({gpu(5, 0), gpu(4, 0), 5e8});
  const auto cpp = simulate(spec, Source::Cpp, flows);
  const auto xml = simulate(spec, Source::Xml, flows);
  ASSERT_EQ(cpp.size(), flows.size());
  ASSERT_EQ(xml.size(), flows.size());
  for (size_t i = 0; i < flows.size(); ++i) {
    EXPECT_GT(cpp[i], 0) << "flow " << i;
    EXPECT_DOUBLE_EQ(cpp[i], xml[i]) << "flow " << i;
  }
}

}  // namespace
}  // namespace stepsim
