// Routes, hosts and pstates of the platform, built in C++ and loaded from the XML alike.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform_test_support.hpp"

namespace stepsim {
namespace {

using test::Source;
using Names = std::vector<std::string>;

class PlatformRoutes : public ::testing::TestWithParam<Source> {};

// Checks every ordered GPU pair against the rule: same node -> the sender's NVLink up half and the
// receiver's NVLink down half; other node -> the sender's NIC up half and the receiver's NIC down half.
void expect_all_routes(const PlatformSpec& spec, Source source) {
  test::check_in_child([&] {
    auto engine = test::make_engine();
    const auto hosts = test::make_platform(*engine, spec, source);
    const int64_t G = spec.gpus_per_node;
    EXPECT_EQ(hosts.size(), size_t(spec.nodes * G));
    EXPECT_EQ(engine->get_host_count(), size_t(spec.nodes * G));
    for (int64_t a = 0; a < spec.nodes * G; ++a)
      for (int64_t b = 0; b < spec.nodes * G; ++b) {
        const int64_t na = a / G, ga = a % G, nb = b / G, gb = b % G;
        double latency = -1;
        const Names got = test::route_names(hosts[size_t(a)], hosts[size_t(b)], &latency);
        if (a == b) {
          EXPECT_EQ(got, Names{"__loopback__"}) << "self route of " << gpu_host_name(na, ga);
          continue;
        }
        Names want;
        double want_latency = 0;
        if (na == nb) {
          want = {"nvl-" + gpu_host_name(na, ga) + "_UP", "nvl-" + gpu_host_name(nb, gb) + "_DOWN"};
          want_latency = spec.nvlink_latency_s;
        } else {
          want = {"ib-" + gpu_host_name(na, ga) + "_UP", "ib-" + gpu_host_name(nb, gb) + "_DOWN"};
          want_latency = spec.ib_latency_s;
        }
        EXPECT_EQ(got, want) << gpu_host_name(na, ga) << " -> " << gpu_host_name(nb, gb);
        EXPECT_NEAR(latency, want_latency, 1e-15) << gpu_host_name(na, ga) << " -> " << gpu_host_name(nb, gb);
      }
  });
}

TEST_P(PlatformRoutes, IntraNodeOverNvlinkInterNodeOverTheTwoNics) {
  PlatformSpec spec = test::h800_spec(3, 4);
  spec.ib_latency_s = 4e-6;      // end to end, 2 us per NIC half
  spec.nvlink_latency_s = 1e-6;  // end to end, 0.5 us per NVLink half
  expect_all_routes(spec, GetParam());
}

TEST_P(PlatformRoutes, EightGpusPerNode) { expect_all_routes(test::h800_spec(3, 8), GetParam()); }

TEST_P(PlatformRoutes, OneGpuPerNode) {
  PlatformSpec spec = test::h800_spec(3, 1);
  spec.nvlink_Bps = 0;  // no NVLink on a one-GPU node
  expect_all_routes(spec, GetParam());
}

TEST_P(PlatformRoutes, OneNode) { expect_all_routes(test::h800_spec(1, 4), GetParam()); }

TEST_P(PlatformRoutes, OneGpu) { expect_all_routes(test::h800_spec(1, 1), GetParam()); }

TEST_P(PlatformRoutes, HostsAreNamedAndIndexedNodeMajor) {
  const Source source = GetParam();
  test::check_in_child([&] {
    auto engine = test::make_engine();
    const auto hosts = test::make_platform(*engine, test::h800_spec(4, 8), source);
    EXPECT_EQ(hosts.size(), 32u);
    EXPECT_EQ(engine->get_host_count(), 32u);
    EXPECT_EQ(hosts.at(0)->get_name(), "n0g0");
    EXPECT_EQ(hosts.at(7)->get_name(), "n0g7");
    EXPECT_EQ(hosts.at(8)->get_name(), "n1g0");
    EXPECT_EQ(hosts.at(31)->get_name(), "n3g7");
  });
}

TEST_P(PlatformRoutes, EveryHostHasTwoPstates) {
  const Source source = GetParam();
  PlatformSpec spec = test::h800_spec(2, 8);
  spec.comm_speed_factor = 112.0 / 132.0;  // 20 of 132 SMs held by comm kernels
  test::check_in_child([&] {
    auto engine = test::make_engine();
    const auto hosts = test::make_platform(*engine, spec, source);
    const double full = 1456.6e12;
    const double during_comm = 1456.6e12 * 112.0 / 132.0;
    for (const auto* h : hosts) {
      ASSERT_EQ(h->get_pstate_count(), 2u) << h->get_name();
      EXPECT_EQ(h->get_pstate(), 0u);
      EXPECT_DOUBLE_EQ(h->get_pstate_speed(0), full) << h->get_name();
      EXPECT_DOUBLE_EQ(h->get_pstate_speed(1), during_comm) << h->get_name();
      EXPECT_DOUBLE_EQ(h->get_speed(), full);
    }
  });
}

TEST(PlatformBuild, RefusesASecondPlatform) {
  test::check_in_child([] {
    auto engine = test::make_engine();
    build_platform(*engine, test::h800_spec(1, 2));
    EXPECT_THROW(build_platform(*engine, test::h800_spec(1, 2)), std::logic_error);
  });
}

INSTANTIATE_TEST_SUITE_P(BothSources, PlatformRoutes, ::testing::Values(Source::Cpp, Source::Xml),
                         [](const auto& info) { return std::string(test::source_name(info.param)); });

}  // namespace
}  // namespace stepsim
