#include "simulator/engine/child_run.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

namespace stepsim {
namespace {

void write_all(int fd, const std::string& s) {
  for (size_t at = 0; at < s.size();) {
    const ssize_t n = ::write(fd, s.data() + at, s.size() - at);
    if (n <= 0) return;
    at += size_t(n);
  }
}

}  // namespace

std::string run_in_child(const std::function<std::string()>& work) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("cannot create a pipe for a child simulation");
  std::fflush(nullptr);  // the child must not write the parent's buffered output a second time
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("cannot fork a child simulation");
  }
  if (pid == 0) {
    // A child simulation dies with its parent (a sweep point stopped by SIGTERM, a killed run)
    // instead of replaying on for minutes as an orphan.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // the parent died before prctl took effect
    ::close(fds[0]);
    // Reply: 'o' + the result, or 'e' + the error message.
    std::string reply;
    try {
      reply = work();
      reply.insert(reply.begin(), 'o');
    } catch (const std::exception& e) {
      reply = std::string("e") + e.what();
    } catch (...) {
      reply = "eunknown error";
    }
    write_all(fds[1], reply);
    ::close(fds[1]);
    ::_exit(0);  // no atexit handlers, no stdio flush: the parent owns stdout
  }
  ::close(fds[1]);
  std::string reply;
  char buf[65536];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) reply.append(buf, size_t(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!reply.empty() && reply[0] == 'o') return reply.substr(1);
  if (!reply.empty() && reply[0] == 'e') throw std::runtime_error("child simulation failed: " + reply.substr(1));
  throw std::runtime_error("child simulation died (wait status " + std::to_string(status) + ")");
}

}  // namespace stepsim
