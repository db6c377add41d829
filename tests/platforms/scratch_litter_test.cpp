// The suite leaves nothing in TMPDIR. Tests write into scratch directories their process removes at
// exit; a forked child (which ends with _exit, skipping destructors) must use its parent's, never
// make its own: the XML-platform tests build their platform in a child, and each once left an empty
// stepsim-test-* folder behind (21 after a full ctest run).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/scratch_dir.hpp"

namespace stepsim::test {
namespace {

TEST(ScratchDirs, ChildProcessesLeaveNoFolderBehind) {
  const ScratchDir tmp;  // the TMPDIR of a run of this binary's XML-platform tests
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string cmd = "TMPDIR='" + tmp.path().string() + "' '" + self +
                          "' --gtest_filter='BothSources/PlatformFlows.*/xml' > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  for (const auto& left : std::filesystem::directory_iterator(tmp.path()))
    ADD_FAILURE() << "left behind: " << left.path().string();
}

}  // namespace
}  // namespace stepsim::test
