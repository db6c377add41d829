// Runs the stepsim binary as a user would and captures its exit code, stdout and stderr, for
// every test folder that checks the command line end to end.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

#include "scratch_dir.hpp"

namespace stepsim::test {

struct CliResult {
  int code = -1;
  std::string out, err;
};

// Runs `cmd` through the shell; its stdout and exit code (-1: it did not start or did not exit).
inline CliResult run_shell(const std::string& cmd) {
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `args` is appended to the binary's path as shell words; `cwd` (optional) is where it runs.
inline CliResult run_stepsim(const std::string& args, const std::string& cwd = "") {
  // One stderr file per call: ctest runs the tests of one binary in parallel processes.
  static int calls = 0;
  const std::string err_file = process_scratch().file("stderr_" + std::to_string(calls++) + ".txt");
  const std::string cmd = (cwd.empty() ? "" : "cd '" + cwd + "' && ") + std::string(STEPSIM_BINARY) + " " + args +
                          " 2>" + err_file;
  CliResult r = run_shell(cmd);
  std::ifstream e(err_file);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  std::filesystem::remove(err_file);
  return r;
}

// `stepsim args` refused as the project promises: exit 2 with exactly one stderr line, starting
// "stepsim: error: " and holding every piece (the file or --set, the key, the fix).
inline void expect_rejected(const std::string& args, std::initializer_list<std::string> pieces) {
  const CliResult r = run_stepsim(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
  ASSERT_FALSE(r.err.empty()) << args;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
  EXPECT_EQ(r.err.rfind("stepsim: error: ", 0), 0u) << r.err;
  for (const auto& p : pieces) EXPECT_NE(r.err.find(p), std::string::npos) << "missing \"" << p << "\" in: " << r.err;
}

}  // namespace stepsim::test
