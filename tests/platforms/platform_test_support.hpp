// Helpers for the platform tests: a quiet SimGrid Engine in a forked child (one Engine per process
// whatever runs the test binary), platform construction from either source, route names, and
// point-to-point flows timed with actors and mailboxes.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "../scratch_dir.hpp"
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include "platforms/cluster_platform.hpp"

namespace stepsim::test {

namespace sg4 = simgrid::s4u;

// Runs `body` in a forked child and returns the numbers it produced. Assertions made inside the
// child print as usual; a failed assertion or a crash there fails the calling test.
inline std::vector<double> in_child(const std::function<std::vector<double>()>& body) {
  int fds[2];
  if (pipe(fds) != 0) {
    ADD_FAILURE() << "pipe() failed";
    return {};
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::vector<double> values = body();
    size_t n = values.size();
    bool ok = write(fds[1], &n, sizeof n) == ssize_t(sizeof n);
    if (n > 0) ok = ok && write(fds[1], values.data(), n * sizeof(double)) == ssize_t(n * sizeof(double));
    close(fds[1]);
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(ok && !::testing::Test::HasFailure() ? 0 : 1);
  }
  close(fds[1]);
  std::vector<double> values;
  size_t n = 0;
  if (read(fds[0], &n, sizeof n) == ssize_t(sizeof n)) {
    values.resize(n);
    size_t got = 0;
    auto* bytes = reinterpret_cast<char*>(values.data());
    while (got < n * sizeof(double)) {
      const ssize_t r = read(fds[0], bytes + got, n * sizeof(double) - got);
      if (r <= 0) break;
      got += size_t(r);
    }
    if (got != n * sizeof(double)) values.clear();
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) {
    ADD_FAILURE() << "the simulation child died (signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ")";
    return {};
  }
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the simulation child failed (see its messages above)";
  return values;
}

// Runs `body`, which only checks things, in a forked child (gtest assertions allowed, fatal ones too).
inline void check_in_child(const std::function<void()>& body) {
  in_child([&] {
    body();
    return std::vector<double>{};
  });
}

// A quiet Engine with a fake command line. Build it inside in_child only.
inline std::unique_ptr<sg4::Engine> make_engine() {
  xbt_log_control_set("root.thres:critical");
  static char name[] = "test_platforms";
#if defined(__SANITIZE_ADDRESS__)
  static char factory[] = "--cfg=contexts/factory:thread";  // see make_simgrid_engine
  static char* argv[] = {name, factory, nullptr};
  static int argc = 2;
#else
  static char* argv[] = {name, nullptr};
  static int argc = 1;
#endif
  return std::make_unique<sg4::Engine>(&argc, argv);
}

// The H800 cluster of the committed file, at any size.
inline PlatformSpec h800_spec(int64_t nodes, int64_t gpus_per_node) {
  PlatformSpec s;
  s.nodes = nodes;
  s.gpus_per_node = gpus_per_node;
  s.gpu_flops = 1456.6e12;
  s.comm_speed_factor = 1.0;
  s.ib_Bps = 50e9;
  s.nvlink_Bps = 160e9;
  s.gpu_name = "H800";
  return s;
}

// A file name no other test process uses.
inline std::filesystem::path temp_xml_path(const std::string& tag) {
  return process_scratch().file("platform-" + tag + ".xml");
}

enum class Source { Cpp, Xml };

inline const char* source_name(Source s) { return s == Source::Cpp ? "cpp" : "xml"; }
inline void PrintTo(Source s, std::ostream* os) { *os << source_name(s); }

// Puts the platform into `engine` from either source and returns the GPU hosts by global id.
inline std::vector<sg4::Host*> make_platform(sg4::Engine& engine, const PlatformSpec& spec, Source source) {
  if (source == Source::Cpp) return build_platform(engine, spec);
  const auto path = temp_xml_path("load");
  {
    std::ofstream out(path);
    out << platform_xml(spec);
  }
  engine.load_platform(path.string());
  std::filesystem::remove(path);
  std::vector<sg4::Host*> hosts;
  for (int64_t n = 0; n < spec.nodes; ++n)
    for (int64_t g = 0; g < spec.gpus_per_node; ++g) hosts.push_back(engine.host_by_name(gpu_host_name(n, g)));
  return hosts;
}

inline std::vector<std::string> route_names(const sg4::Host* src, const sg4::Host* dst, double* latency = nullptr) {
  std::vector<sg4::Link*> links;
  double lat = 0;
  src->route_to(dst, links, &lat);
  if (latency) *latency = lat;
  std::vector<std::string> names;
  for (const auto* l : links) names.push_back(l->get_name());
  return names;
}

struct Flow {
  size_t src = 0;  // global GPU ids
  size_t dst = 0;
  double bytes = 0;
};

// Starts every flow at time 0 (one sender and one receiver actor per flow, a mailbox each), runs the
// simulation and returns each flow's completion time.
inline std::vector<double> run_flows(sg4::Engine& engine, const std::vector<sg4::Host*>& hosts,
                                     const std::vector<Flow>& flows) {
  auto done = std::make_shared<std::vector<double>>(flows.size(), -1.0);
  static int payload = 0;
  for (size_t i = 0; i < flows.size(); ++i) {
    const Flow f = flows[i];
    const std::string box = "flow-" + std::to_string(i);
    sg4::Actor::create("send-" + std::to_string(i), hosts.at(f.src),
                       [box, f]() { sg4::Mailbox::by_name(box)->put(&payload, uint64_t(f.bytes)); });
    sg4::Actor::create("recv-" + std::to_string(i), hosts.at(f.dst), [box, i, done]() {
      sg4::Mailbox::by_name(box)->get<int>();
      (*done)[i] = sg4::Engine::get_clock();
    });
  }
  engine.run();
  return *done;
}

}  // namespace stepsim::test
