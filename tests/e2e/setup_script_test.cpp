// scripts/setup.sh on a "fresh machine": every Debian package missing. The commands it would run
// (dpkg-query, apt-get, cmake, id) are stand-ins on PATH that record their arguments, so nothing is
// installed or built; the script itself runs unchanged from a copy of the scripts folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli_runner.hpp"
#include "tests/scratch_dir.hpp"

namespace stepsim::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct SetupRun {
  CliResult result;
  std::string apt_args, cmake_args, err;
};

// Runs a copy of scripts/setup.sh with `args`; `apt_fails` makes the stand-in apt-get's install
// print an error and fail as apt does.
SetupRun run_setup(const ScratchDir& dir, const std::string& args, bool apt_fails = false) {
  namespace fs = std::filesystem;
  fs::create_directories(dir.path() / "repo" / "scripts");
  fs::create_directories(dir.path() / "bin");
  fs::copy_file(fs::path(STEPSIM_SOURCE_DIR) / "scripts" / "setup.sh", dir.path() / "repo" / "scripts" / "setup.sh",
                fs::copy_options::overwrite_existing);
  const std::string log = dir.file("calls");
  const auto stub = [&](const std::string& name, const std::string& body) {
    const std::string p = dir.write("bin/" + name, "#!/bin/sh\n" + body + "\n");
    fs::permissions(p, fs::perms::owner_all);
  };
  stub("dpkg-query", "exit 1");  // nothing installed
  stub("id", "echo 0");          // root: no sudo
  // apt floods stdout with progress as it does (dpkg's Unpacking/Setting up lines).
  stub("apt-get", std::string("echo \"apt-get $*\" >> '") + log +
                      "'\nfor i in 1 2 3 4 5 6 7 8 9 10; do echo \"Setting up package-$i ...\"; done\n" +
                      (apt_fails ? "case \"$*\" in *install*) echo 'E: Unable to locate package chromium' >&2; exit 100;; esac\n"
                                 : "") +
                      "exit 0");
  stub("cmake", "echo \"cmake $*\" >> '" + log + "'");
  const std::string err = dir.file("stderr");
  SetupRun run;
  run.result = run_shell("PATH='" + dir.file("bin") + "':/usr/bin:/bin bash '" + dir.file("repo/scripts/setup.sh") +
                         "' " + args + " 2>'" + err + "'");
  run.err = slurp(err);
  std::istringstream calls(slurp(log));
  for (std::string line; std::getline(calls, line);) {
    if (line.rfind("apt-get", 0) == 0 && line.find(" install ") != std::string::npos) run.apt_args = line;
    if (line.rfind("cmake -S", 0) == 0) run.cmake_args = line;
  }
  return run;
}

// The README's first command simulates; the browser and the test framework come with the tests only.
TEST(SetupScript, SimulatorSetupInstallsNoBrowserAndNoTestFramework) {
  ScratchDir dir;
  const SetupRun run = run_setup(dir, "stepsim");
  EXPECT_EQ(run.result.code, 0) << run.err;
  EXPECT_NE(run.apt_args.find("libsimgrid-dev"), std::string::npos) << run.apt_args;
  for (const char* test_only : {"chromium", "libgtest-dev", "jq"})
    EXPECT_EQ(run.apt_args.find(test_only), std::string::npos) << test_only << " in: " << run.apt_args;
  // Without GoogleTest the build is configured without the test suite (which would need it).
  EXPECT_NE(run.cmake_args.find("-DSTEPSIM_TESTS=OFF"), std::string::npos) << run.cmake_args;
}

TEST(SetupScript, FullSetupInstallsWhatTheTestsUse) {
  ScratchDir dir;
  const SetupRun run = run_setup(dir, "--packages");
  EXPECT_EQ(run.result.code, 0) << run.err;
  for (const char* pkg : {"libsimgrid-dev", "chromium", "libgtest-dev", "jq"})
    EXPECT_NE(run.apt_args.find(pkg), std::string::npos) << pkg << " missing from: " << run.apt_args;
}

// apt's progress stays off the terminal: one line says what is installed.
TEST(SetupScript, AptProgressDoesNotFloodTheTerminal) {
  ScratchDir dir;
  const SetupRun run = run_setup(dir, "stepsim");
  EXPECT_EQ(run.result.out.find("Setting up"), std::string::npos) << run.result.out;
  EXPECT_EQ(run.err.find("Setting up"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("setup: installing"), std::string::npos) << run.err;
}

// ... but a failure still shows what apt said, and the script stops.
TEST(SetupScript, AptErrorsStillReachTheTerminal) {
  ScratchDir dir;
  const SetupRun run = run_setup(dir, "stepsim", /*apt_fails=*/true);
  EXPECT_NE(run.result.code, 0);
  EXPECT_NE(run.err.find("E: Unable to locate package"), std::string::npos) << run.err;
  EXPECT_TRUE(run.cmake_args.empty()) << "went on to configure after apt failed: " << run.cmake_args;
}

}  // namespace
}  // namespace stepsim::test
