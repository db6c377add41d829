// `stepsim sweep` stopped by SIGTERM: it passes the signal on to the points it runs, waits for
// them, and exits with 128 + the signal's number; no point process outlives it.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "tests/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;

// The processes whose parent is `parent` (from /proc/PID/stat: "pid (comm) state ppid ..."); with
// `living`, not those that have ended and wait to be reaped (zombies).
std::set<pid_t> children_of(pid_t parent, bool living = false) {
  std::set<pid_t> kids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = 0;
    pid_t ppid = 0;
    if (rest >> state >> ppid && ppid == parent && !(living && state == 'Z')) kids.insert(pid_t(std::stol(name)));
  }
  return kids;
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

// Polls `done` every 20 ms for at most `limit` (a bound on how long to wait, not a timing check).
template <class F>
bool wait_until(F done, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

TEST(SweepSignals, SigtermStopsTheSweepAndItsPoints) {
  stepsim::test::ScratchDir dir;
  const std::string out = dir.file("sweep"), err = dir.file("stderr.txt");
  // A point the sweep leaves behind would be re-parented to this process (not to init), so after
  // the sweep ends its absence can be checked without knowing when each point started.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  // Two points that each replay every GPU of the default step (minutes of work), run at once.
  const pid_t sweep = ::fork();
  ASSERT_GE(sweep, 0);
  if (sweep == 0) {
    if (!std::freopen(err.c_str(), "w", stderr) || !std::freopen("/dev/null", "w", stdout)) ::_exit(127);
    ::execl(STEPSIM_BINARY, STEPSIM_BINARY, "sweep", "--set", "sim.mode=full", "--grid", "parallel.microbatches=30,60",
            "-j", "2", "-o", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // The sweep starts min(2, cores) points at once (-j is capped at the cores): wait until it has.
  const size_t expected = std::min<size_t>(2, std::max(1u, std::thread::hardware_concurrency()));
  const bool started = wait_until([&] { return children_of(sweep).size() >= expected; }, std::chrono::seconds(120));
  const std::set<pid_t> points = children_of(sweep);
  if (started) ::kill(sweep, SIGTERM);
  int status = 0;
  const bool ended = wait_until([&] { return ::waitpid(sweep, &status, WNOHANG) == sweep; }, std::chrono::seconds(120));
  if (!ended) {  // clean up before failing: the sweep and whatever it still runs
    for (const pid_t p : children_of(sweep)) ::kill(p, SIGKILL);
    ::kill(sweep, SIGKILL);
    ::waitpid(sweep, &status, 0);
  }
  // Orphaned points still running, re-parented here: they outlived the sweep. Reap whatever
  // came here, running or not.
  const std::set<pid_t> orphans = children_of(::getpid(), true);
  for (const pid_t p : children_of(::getpid())) ::kill(p, SIGKILL), ::waitpid(p, nullptr, 0);
  ASSERT_TRUE(started && !points.empty()) << "the sweep never ran its points";
  ASSERT_TRUE(ended) << "the sweep did not stop after SIGTERM";
  ASSERT_TRUE(WIFEXITED(status)) << "wait status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  for (const pid_t p : points) EXPECT_FALSE(alive(p)) << "point process " << p << " outlived the sweep";
  EXPECT_TRUE(orphans.empty()) << orphans.size() << " point process(es) outlived the sweep";
  std::ifstream in(err);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("stopped by SIGTERM"), std::string::npos) << text;
}

}  // namespace
