// The CLI side of the rule: a bad config prints one "stepsim: error:" line and exits with 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "vocabulary/config_error.hpp"

namespace {

struct Result {
  int rc = -1;
  std::string out;  // stdout and stderr together
};

Result run(const std::string& args) {
  Result r;
  const std::string cmd = std::string(STEPSIM_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), int(buf.size()), pipe)) r.out += buf.data();
  const int status = pclose(pipe);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

void expect_one_error_line(const Result& r, const std::string& piece) {
  EXPECT_EQ(r.rc, stepsim::kBadInputExit) << r.out;
  EXPECT_EQ(r.out.rfind("stepsim: error: ", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "more than one line: " << r.out;
  EXPECT_NE(r.out.find(piece), std::string::npos) << r.out;
}

TEST(ConfigCli, BadSetExitsTwoWithOneLine) {
  expect_one_error_line(run("roofline --set parallel.pp=7"), "parallel.pp");
  expect_one_error_line(run("roofline --set hardware.ib_GBps=-50"), "--set: hardware.ib_GBps");
  expect_one_error_line(run("roofline --set parallel.ppp=1"), "--set: parallel.ppp");
  expect_one_error_line(run("roofline --set parallel.pp"), "expected key=value");
}

TEST(ConfigCli, BadFileExitsTwoWithOneLine) {
  expect_one_error_line(run("roofline /nonexistent/plan.yaml"), "/nonexistent/plan.yaml");
  expect_one_error_line(run("roofline --set model.config_json=/nonexistent/config.json"), "/nonexistent/config.json");
  expect_one_error_line(run(std::string("roofline ") + STEPSIM_SOURCE_DIR + "/workloads/models"), "cannot read");
}

}  // namespace
