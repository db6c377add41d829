#include "simulator/calibration/child_simulation.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "simulator/engine/simulate.hpp"

namespace stepsim::calib {
namespace {

void write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w <= 0) return;
    p += w;
    n -= size_t(w);
  }
}

}  // namespace

StepSplit simulate_in_child(const Plan& plan) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("cannot create a pipe for a child simulation");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot fork a child simulation");
  if (pid == 0) {
    ::close(fds[0]);
    // Reply: 'o' + StepSplit, or 'e' + message.
    try {
      SimOptions o;
      o.quiet = true;
      const SimResult r = simulate(plan, o);
      StepSplit s;
      s.step_time_s = r.step_time_s;
      for (const RankResult& rr : r.ranks) {
        s.compute_s += rr.compute_s / double(r.ranks.size());
        s.exposed_comm_s += rr.exposed_comm_s / double(r.ranks.size());
        s.bubble_s += rr.bubble_s / double(r.ranks.size());
      }
      write_all(fds[1], "o", 1);
      write_all(fds[1], &s, sizeof s);
    } catch (const std::exception& e) {
      write_all(fds[1], "e", 1);
      write_all(fds[1], e.what(), std::string(e.what()).size());
    }
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) reply.append(buf, size_t(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (reply.size() == 1 + sizeof(StepSplit) && reply[0] == 'o') {
    StepSplit s;
    std::copy(reply.begin() + 1, reply.end(), reinterpret_cast<char*>(&s));
    return s;
  }
  if (!reply.empty() && reply[0] == 'e') throw std::runtime_error("child simulation failed: " + reply.substr(1));
  throw std::runtime_error("child simulation died (status " + std::to_string(status) + ")");
}

}  // namespace stepsim::calib
