// Forked children that die with their parent. stepsim forks for work that must not share its
// process (a second SimGrid replay, a YAML parse that may never end); such a child must not run on
// as an orphan when the parent is killed (a sweep point stopped by SIGTERM, a user's Ctrl-C).
#pragma once

#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>

namespace stepsim::io {

// fork() whose child gets SIGKILL when the parent dies. Returns 0 in the child, the child's pid in
// the parent, -1 when no child could be made. Buffered output is flushed first so that the child
// cannot write it a second time; the child should leave with _exit().
inline pid_t fork_tied_child() {
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // the parent died before prctl took effect
  }
  return pid;
}

// Waits for the child and returns its wait status; a signal arriving meanwhile does not end the wait.
inline int wait_for_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) break;
  return status;
}

}  // namespace stepsim::io
