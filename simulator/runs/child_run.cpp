#include "simulator/runs/child_run.hpp"

#include <unistd.h>

#include <cerrno>

#include "simulator/io/tied_child.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define STEPSIM_LEAK_CHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STEPSIM_LEAK_CHECKED 1
#endif
#endif
#ifdef STEPSIM_LEAK_CHECKED
#include <sanitizer/lsan_interface.h>
#endif

namespace stepsim {
namespace {

void write_all(int fd, const std::string& s) {
  for (size_t at = 0; at < s.size();) {
    const ssize_t n = ::write(fd, s.data() + at, s.size() - at);
    if (n > 0)
      at += size_t(n);
    else if (n == 0 || errno != EINTR)
      return;
  }
}

}  // namespace

std::string run_in_child(const std::function<std::string()>& work) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("cannot create a pipe for a child simulation");
  const pid_t pid = io::fork_tied_child();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("cannot fork a child simulation");
  }
  if (pid == 0) {
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
#ifdef STEPSIM_LEAK_CHECKED
    // The child leaves with _exit, which skips LeakSanitizer's check at exit: check here, before
    // replying, so that a leak in a child's work ends the child and fails the caller.
    __lsan_do_leak_check();
#endif
    write_all(fds[1], reply);
    ::close(fds[1]);
    ::_exit(0);  // no atexit handlers, no stdio flush: the parent owns stdout
  }
  ::close(fds[1]);
  std::string reply;
  char buf[65536];
  for (;;) {  // a signal (a sweep's SIGTERM being handled) must not cut the reply short
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0)
      reply.append(buf, size_t(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  ::close(fds[0]);
  const int status = io::wait_for_child(pid);
  if (!reply.empty() && reply[0] == 'o') return reply.substr(1);
  if (!reply.empty() && reply[0] == 'e') throw std::runtime_error("child simulation failed: " + reply.substr(1));
  throw std::runtime_error("child simulation died (wait status " + std::to_string(status) + ")");
}

}  // namespace stepsim
