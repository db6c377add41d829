// The full 2048-GPU platform loads into SimGrid from the committed XML and from C++ (wall time printed, not asserted).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "platform_test_support.hpp"

namespace stepsim {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(PlatformLoadTime, Xml2048Gpus) {
  const std::string path = std::string(STEPSIM_SOURCE_DIR) + "/platforms/h800-256x8.xml";
  const auto v = test::in_child([&] {
    auto engine = test::make_engine();
    const auto start = std::chrono::steady_clock::now();
    engine->load_platform(path);
    const double wall = seconds_since(start);
    EXPECT_EQ(engine->get_host_count(), 2048u);
    // A route lookup across the whole cluster works.
    const auto names = test::route_names(engine->host_by_name("n0g0"), engine->host_by_name("n255g7"));
    EXPECT_EQ(names, (std::vector<std::string>{"ib-n0g0_UP", "ib-n255g7_DOWN"}));
    return std::vector<double>{wall};
  });
  ASSERT_EQ(v.size(), 1u);
  // Printed for the record, not asserted: wall time depends on the machine and its load.
  std::printf("[ platform ] load_platform(h800-256x8.xml), 2048 GPUs: %.3f s\n", v[0]);
}

TEST(PlatformLoadTime, Cpp2048Gpus) {
  const auto v = test::in_child([&] {
    auto engine = test::make_engine();
    const auto start = std::chrono::steady_clock::now();
    const auto hosts = build_platform(*engine, test::h800_spec(256, 8));
    const double wall = seconds_since(start);
    EXPECT_EQ(hosts.size(), 2048u);
    EXPECT_EQ(engine->get_host_count(), 2048u);
    return std::vector<double>{wall};
  });
  ASSERT_EQ(v.size(), 1u);
  std::printf("[ platform ] build_platform(), 2048 GPUs: %.3f s\n", v[0]);
}

}  // namespace
}  // namespace stepsim
