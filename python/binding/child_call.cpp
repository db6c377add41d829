#include "python/binding/child_call.hpp"

#include <pybind11/pybind11.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>

#include "simulator/io/tied_child.hpp"
#include "vocabulary/config_error.hpp"

namespace stepsim::python {
namespace {

namespace py = pybind11;

// Bumped by interrupt_all(); a run that sees it move stops.
std::atomic<uint64_t> g_interrupts{0};

// How often the waiting thread looks at Python's signals: a Ctrl-C lands within this.
constexpr int kPollMs = 50;

// The child's messages: a kind byte, the payload's length (8 bytes), the payload.
// 'p' progress (an engine::ProgressUpdate), then one reply: 'o' the result, 'c' a ConfigError's
// message, 'm' out of memory, 'e' another error's message.
void write_all(int fd, const char* data, size_t size) {
  for (size_t at = 0; at < size;) {
    const ssize_t n = ::write(fd, data + at, size - at);
    if (n > 0)
      at += size_t(n);
    else if (n == 0 || errno != EINTR)
      return;  // the parent is gone: nobody to tell
  }
}

void send(int fd, char kind, const std::string& payload) {
  char header[9];
  header[0] = kind;
  const uint64_t size = payload.size();
  std::memcpy(header + 1, &size, sizeof size);
  write_all(fd, header, sizeof header);
  write_all(fd, payload.data(), payload.size());
}

[[noreturn]] void child_main(int fd, const std::function<std::string(const ChildChannel&)>& work) {
  // A terminal's Ctrl-C reaches the whole process group: the parent decides, and ends this child.
  std::signal(SIGINT, SIG_IGN);
  char kind = 'o';
  std::string reply;
  try {
    reply = work(ChildChannel(fd));
  } catch (const ConfigError& e) {
    kind = 'c';
    reply = e.what();
  } catch (const std::bad_alloc&) {
    kind = 'm';
  } catch (const std::exception& e) {
    kind = 'e';
    reply = e.what();
  } catch (...) {
    kind = 'e';
    reply = "unknown error";
  }
  send(fd, kind, reply);
  ::close(fd);
  ::_exit(0);  // no atexit handlers, no stdio flush, no Python: all of that belongs to the parent
}

struct Frame {
  char kind;
  std::string payload;
};

// Takes the complete frames off the front of `buffer`.
std::optional<Frame> next_frame(std::string& buffer) {
  if (buffer.size() < 9) return std::nullopt;
  uint64_t size = 0;
  std::memcpy(&size, buffer.data() + 1, sizeof size);
  if (buffer.size() - 9 < size) return std::nullopt;
  Frame f{buffer[0], buffer.substr(9, size)};
  buffer.erase(0, 9 + size);
  return f;
}

// Reads what the pipe holds now (non-blocking). False at end of file.
bool drain(int fd, std::string& buffer) {
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      buffer.append(chunk, size_t(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return true;  // EAGAIN: nothing more for now
  }
}

// The child and its pipe: killed and reaped however the call ends.
class Child {
 public:
  Child(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      py::gil_scoped_release nogil;
      (void)io::wait_for_child(pid_);
    }
    ::close(fd_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  int fd() const { return fd_; }
  // Whether the child has ended (its wait status in `status`); it is reaped then.
  bool ended(int& status) {
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {  // ECHILD: reaped already (SIGCHLD ignored)
      pid_ = -1;
      return true;
    }
    return false;
  }
  void reap(int& status) {
    if (pid_ <= 0) return;
    py::gil_scoped_release nogil;
    status = io::wait_for_child(pid_);
    pid_ = -1;
  }

 private:
  pid_t pid_;
  int fd_;
};

std::string died(int status) {
  if (WIFSIGNALED(status))
    return "the simulation process was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")" +
           (WTERMSIG(status) == SIGKILL ? "; out of memory? try sim.mode=auto or a smaller plan" : "");
  return "the simulation process ended without a result (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
}

}  // namespace

void ChildChannel::progress(const engine::ProgressUpdate& update) const {
  send(fd_, 'p', std::string(reinterpret_cast<const char*>(&update), sizeof update));
}

void interrupt_all() { g_interrupts.fetch_add(1); }

std::string run_in_child(const std::function<std::string(const ChildChannel&)>& work,
                         const std::function<void(const engine::ProgressUpdate&)>& on_progress) {
  const uint64_t interrupts = g_interrupts.load();
  int fds[2];
  // Close-on-exec: a subprocess started meanwhile must not hold the pipe.
  if (::pipe2(fds, O_CLOEXEC) != 0) throw SimulationFailure(std::string("cannot create a pipe: ") + std::strerror(errno));
  // Forked with the GIL held: no other thread of this process is then inside stepsim's code (every
  // call into it holds the GIL), so the child finds no lock of ours held.
  const pid_t pid = io::fork_tied_child();
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], work);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    throw SimulationFailure(std::string("cannot start the simulation process: ") + std::strerror(errno));
  }
  Child child(pid, fds[0]);
  ::fcntl(child.fd(), F_SETFL, ::fcntl(child.fd(), F_GETFL) | O_NONBLOCK);

  // The pipe's other end may also be held by children forked meanwhile by other threads, so its
  // end of file says little: the reply frame, or the child's exit, ends the wait.
  std::string buffer;
  std::optional<Frame> reply;
  int status = 0;
  bool ended = false;
  while (!reply) {
    {
      py::gil_scoped_release nogil;
      pollfd p{child.fd(), POLLIN, 0};
      (void)::poll(&p, 1, kPollMs);
      (void)drain(child.fd(), buffer);
      if (child.ended(status)) {
        ended = true;
        (void)drain(child.fd(), buffer);  // everything it wrote is in the pipe now
      }
    }
    while (std::optional<Frame> f = next_frame(buffer)) {
      if (f->kind == 'p') {
        if (on_progress && f->payload.size() == sizeof(engine::ProgressUpdate)) {
          engine::ProgressUpdate u;
          std::memcpy(&u, f->payload.data(), sizeof u);
          on_progress(u);  // a Python exception here ends the child (Child's destructor) and propagates
        }
        continue;
      }
      reply = std::move(f);
      break;
    }
    if (reply) break;
    if (ended) throw SimulationFailure(died(status));
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (g_interrupts.load() != interrupts) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw py::error_already_set();
    }
  }
  child.reap(status);  // it leaves right after its reply
  switch (reply->kind) {
    case 'o':
      return std::move(reply->payload);
    case 'c':
      throw ConfigError(reply->payload);
    case 'm':
      throw std::bad_alloc();
    default:
      throw SimulationFailure(reply->payload);
  }
}

}  // namespace stepsim::python
