#include "simulator/sweep/process_pool.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cerrno>
#include <ctime>
#include <cstring>
#include <map>

#include "vocabulary/config_error.hpp"

extern char** environ;

namespace stepsim::sweep {
namespace {

// Starts one job; returns its pid, or -1 with `status` filled in when it could not start.
pid_t spawn(const Job& job, JobStatus& status) {
  for (const auto* path : {&job.stdout_path, &job.stderr_path}) {
    // Opened here once to fail early with a clear message; the child reopens it via file actions.
    const int fd = ::open(path->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw ConfigError(*path + ": cannot write a sweep point's output; check the output directory (-o)");
    ::close(fd);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, job.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, job.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv;
  for (const auto& a : job.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    status.started = false;
    status.error = std::string("cannot start ") + argv[0] + ": " + std::strerror(rc);
    return -1;
  }
  return pid;
}

// The signal (SIGINT, SIGTERM) that asked the sweep to stop; forwarded to the running points.
volatile std::sig_atomic_t g_stop_signal = 0;
void on_stop_signal(int sig) { g_stop_signal = sig; }

// Installs the handler for the pool's lifetime (no SA_RESTART, so waitpid returns EINTR), and
// restores the previous handlers after.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

}  // namespace

int stop_signal() { return g_stop_signal; }

std::vector<JobStatus> run_jobs(const std::vector<Job>& jobs, int max_parallel,
                                const std::function<void(size_t, const JobStatus&)>& on_done) {
  std::vector<JobStatus> statuses(jobs.size());
  std::map<pid_t, size_t> running;
  size_t next = 0;
  const size_t limit = size_t(max_parallel < 1 ? 1 : max_parallel);
  StopSignals stop;
  bool forwarded = false;
  while (next < jobs.size() || !running.empty()) {
    if (g_stop_signal && !forwarded) {  // stop starting points; pass the signal on to running ones
      for (const auto& [pid, index] : running) ::kill(pid, g_stop_signal);
      forwarded = true;
      next = jobs.size();
    }
    while (!g_stop_signal && next < jobs.size() && running.size() < limit) {
      const size_t i = next++;
      const pid_t pid = spawn(jobs[i], statuses[i]);
      if (pid < 0) {
        if (on_done) on_done(i, statuses[i]);
      } else {
        running[pid] = i;
      }
    }
    if (running.empty()) continue;
    // Polled, not a blocking wait: a signal that lands between the check above and a blocking
    // waitpid would be seen only when a point ends on its own, maybe hours later.
    int wstatus = 0;
    const pid_t pid = ::waitpid(-1, &wstatus, WNOHANG);
    if (pid == 0) {
      const timespec pause{0, 20'000'000};  // 20 ms; a signal cuts it short
      ::nanosleep(&pause, nullptr);
      continue;
    }
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nothing left to wait for
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not ours
    JobStatus& s = statuses[it->second];
    if (WIFEXITED(wstatus)) {
      s.exit_code = WEXITSTATUS(wstatus);
    } else if (WIFSIGNALED(wstatus)) {
      s.signal = WTERMSIG(wstatus);
      s.exit_code = -1;
    }
    const size_t done = it->second;
    running.erase(it);
    if (on_done) on_done(done, s);
  }
  return statuses;
}

}  // namespace stepsim::sweep
