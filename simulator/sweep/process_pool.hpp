// Runs independent commands in parallel child processes (posix_spawn + waitpid), at most `jobs` at
// a time, each with stdout and stderr sent to its own files. No shell: arguments go to exec as given.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace stepsim::sweep {

struct Job {
  std::vector<std::string> argv;  // argv[0] is the program's path
  std::string stdout_path, stderr_path;
};

struct JobStatus {
  int exit_code = -1;  // exit status, or -1 when killed by a signal
  int signal = 0;      // the signal that killed it, else 0
  bool started = true; // false when posix_spawn itself failed (then `error` says why)
  std::string error;
  bool ok() const { return started && exit_code == 0; }
};

// `on_done(job index, status)` is called in the parent as each job ends (for progress). Throws
// ConfigError when an output file cannot be opened (a bad output directory).
// While it runs, SIGINT and SIGTERM stop it: no new job starts, the running ones get the same
// signal, and run_jobs returns once they have ended; stop_signal() then says which signal came (0:
// none).
std::vector<JobStatus> run_jobs(const std::vector<Job>& jobs, int max_parallel,
                                const std::function<void(size_t, const JobStatus&)>& on_done = {});

int stop_signal();

}  // namespace stepsim::sweep
