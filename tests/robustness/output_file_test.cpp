// Outputs are written to a temporary file renamed over the target once complete. Whatever ends the
// writing early -- an error, a long name, Ctrl-C or a batch system's SIGTERM -- leaves neither a
// half-written target nor a stray temporary file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "vocabulary/config_error.hpp"
#include "simulator/io/output_file.hpp"
#include "tests/scratch_dir.hpp"

namespace stepsim::test {
namespace {

size_t entries(const std::filesystem::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(OutputFile, SignalRemovesTheTemporaryFileAndEndsAsTheSignalWould) {
  for (const int sig : {SIGTERM, SIGINT}) {
    ScratchDir d;
    const std::string target = d.file("trace.json");
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::signal(sig, SIG_DFL);  // as in a fresh process, whatever the test runner set
      io::OutputFile out(target, "--trace", io::kDashStdoutTaken);
      out.stream() << std::string(1 << 20, 'x');
      ::raise(sig);  // the output is half-written when the signal comes
      ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "wait status " << status;
    EXPECT_EQ(entries(d.path()), 0u) << "a temporary file or the target was left after signal " << sig;
  }
}

TEST(OutputFile, IgnoredSignalStaysIgnored) {
  ScratchDir d;
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGINT, SIG_IGN);  // a background job's SIGINT
    io::OutputFile out(d.file("out.txt"), "-o", io::kDashIsStdout);
    out.stream() << "done";
    ::raise(SIGINT);
    out.commit();
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
  std::ifstream in(d.file("out.txt"));
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "done");
}

// The whole path: `simulate --trace` opens its output before the replay, and SimGrid installs its
// own SIGINT handler (which ends the process with exit(1), removing nothing) when its engine starts.
// Ctrl-C in the middle of the replay must still remove the temporary file and end by SIGINT. The
// replay is interrupted where it says it has started (STEPSIM_TEST_PAUSE_IN_REPLAY holds it there
// until a signal comes), so the test does not depend on how long the replay takes.
TEST(OutputFile, CtrlCDuringAReplayLeavesNoTemporaryTrace) {
  ScratchDir d;
  const std::string trace = d.file("t.json");
  int err[2];
  ASSERT_EQ(::pipe(err), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGINT, SIG_DFL);  // as in a terminal, whatever the test runner set
    ::dup2(err[1], STDERR_FILENO);
    ::close(err[0]);
    ::close(err[1]);
    ::setenv("STEPSIM_TEST_PAUSE_IN_REPLAY", "1", 1);
    ::execl(STEPSIM_BINARY, STEPSIM_BINARY, "simulate", "--trace", trace.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(err[1]);
  // Read stderr until the replay says it is running (or the process ends without saying so).
  std::string said;
  const std::string marker = "paused for a signal";
  char buf[4096];
  while (said.find(marker) == std::string::npos) {
    const ssize_t n = ::read(err[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the process ended (or the pipe failed) without saying so
    said.append(buf, size_t(n));
  }
  const bool started = said.find(marker) != std::string::npos;
  if (started) ::kill(pid, SIGINT);
  ::close(err[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(started) << "the replay never said it started; stderr:\n" << said;
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "wait status " << status;
  EXPECT_EQ(entries(d.path()), 0u) << "the interrupted replay left a file";
}

// A name of 240 bytes is legal (at most 255); the temporary name must not push it past that.
TEST(OutputFile, LongNamesCanBeWritten) {
  ScratchDir d;
  const std::string target = d.file(std::string(240, 'a') + ".xml");
  io::write_output_file(target, "-o", io::kDashIsStdout, "<platform/>");
  EXPECT_TRUE(std::filesystem::exists(target));
  EXPECT_EQ(entries(d.path()), 1u);
}

}  // namespace
}  // namespace stepsim::test
