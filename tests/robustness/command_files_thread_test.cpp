// A command's record of its files (simulator/io/command_files.hpp) belongs to the thread that runs
// it: commands run at once on several threads (the Python module's calls from a thread pool) are
// each checked against their own files only, while one thread's clash is still refused.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "simulator/io/command_files.hpp"
#include "tests/scratch_dir.hpp"
#include "vocabulary/config_error.hpp"

namespace stepsim::test {
namespace {

// Records `path` as an input of the calling thread's command.
void read_input(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  io::note_input(fd, path, "config");
  ::close(fd);
}

TEST(CommandFilesThreads, EachThreadsCommandIsCheckedAgainstItsOwnFiles) {
  const ScratchDir dir;
  const std::string config = dir.write("cfg.yaml", "x: 1\n");
  const io::CommandFiles files;
  read_input(config);
  // Another thread's command, running while this one still holds its scope, may write the file
  // this one read: they are two commands.
  std::string other_thread_error = "not run";
  std::thread other([&] {
    const io::CommandFiles its_files;
    try {
      io::claim_output(config, "trace");
      other_thread_error.clear();
    } catch (const ConfigError& e) {
      other_thread_error = e.what();
    }
  });
  other.join();
  EXPECT_EQ(other_thread_error, "");
  // This thread's own clash is refused as before.
  EXPECT_THROW(io::claim_output(config, "trace"), ConfigError);
}

TEST(CommandFilesThreads, AThreadsScopeEndingForgetsOnlyItsOwnFiles) {
  const ScratchDir dir;
  const std::string config = dir.write("cfg.yaml", "x: 1\n");
  const io::CommandFiles files;
  read_input(config);
  std::thread([&] {
    const io::CommandFiles its_files;
    read_input(dir.write("other.yaml", "y: 2\n"));
  }).join();  // its scope ended: it must not have cleared this thread's record
  EXPECT_THROW(io::claim_output(config, "-o"), ConfigError);
}

}  // namespace
}  // namespace stepsim::test
