#include "python/binding/replay_process.hpp"

#include <pybind11/pybind11.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
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

struct Frame {
  char kind;
  std::string payload;
};

// Takes the first complete frame off the front of `buffer`.
std::optional<Frame> next_frame(std::string& buffer) {
  if (buffer.size() < 9) return std::nullopt;
  uint64_t size = 0;
  std::memcpy(&size, buffer.data() + 1, sizeof size);
  if (buffer.size() - 9 < size) return std::nullopt;
  Frame f{buffer[0], buffer.substr(9, size)};
  buffer.erase(0, 9 + size);
  return f;
}

// Reads what the pipe holds now (it is non-blocking).
void drain(int fd, std::string& buffer) {
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0)
      buffer.append(chunk, size_t(n));
    else if (n < 0 && errno == EINTR)
      continue;
    else
      return;  // EAGAIN: nothing more for now; 0: end of file
  }
}

// A descriptor closed however the call ends.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The replay's process: killed and reaped however the call ends.
class Child {
 public:
  explicit Child(pid_t pid) : pid_(pid) {}
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      py::gil_scoped_release nogil;
      (void)io::wait_for_child(pid_);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Whether it has ended (its wait status in `status`); reaped then.
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
};

std::string died(int status) {
  if (WIFSIGNALED(status))
    return "the replay's process was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")" +
           (WTERMSIG(status) == SIGKILL ? "; out of memory? try sim.mode=auto or a smaller plan" : "");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return "cannot run the replay's program (the module's _replay, beside it in the build); rebuild stepsim";
  return "the replay's process ended without a result (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
}

// The request in a memory file: the replay reads it as its stdin, so a large config never
// blocks this thread on a pipe.
int request_file(const std::string& bytes) {
  const int fd = ::memfd_create("stepsim-replay-request", MFD_CLOEXEC);
  if (fd < 0) throw SimulationFailure(std::string("cannot pass the plan to the replay: ") + std::strerror(errno));
  for (size_t at = 0; at < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      throw SimulationFailure(std::string("cannot pass the plan to the replay: ") + std::strerror(errno));
    }
    at += size_t(n);
  }
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

}  // namespace

void interrupt_all() { g_interrupts.fetch_add(1); }

std::string run_replay(const std::string& program, const std::string& cwd, const ReplayRequest& request,
                       const std::function<void(const engine::ProgressUpdate&)>& on_progress) {
  const uint64_t interrupts = g_interrupts.load();
  Fd input{request_file(encode(request))};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw SimulationFailure(std::string("cannot create a pipe: ") + std::strerror(errno));
  Fd output{fds[0]};
  // Everything the child needs is ready before the fork: between fork and exec it only calls what
  // is safe in a copy of a multi-threaded process (no allocation, no lock).
  const char* argv[] = {"_replay", nullptr};
  const pid_t pid = io::fork_tied_child();  // killed with this process, even by SIGKILL
  if (pid == 0) {
    // A terminal's Ctrl-C reaches the whole process group: this process decides, and ends the replay.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGINT, &ignore, nullptr);
    // Moved out of the way first: either may hold 0 or 3 (a process whose stdin was closed).
    const int in = ::fcntl(input.fd, F_DUPFD_CLOEXEC, 10), out = ::fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
    if (in < 0 || out < 0 || ::chdir(cwd.c_str()) != 0 || ::dup2(in, 0) < 0 || ::dup2(out, kReplyFd) < 0) ::_exit(127);
    ::execv(program.c_str(), const_cast<char* const*>(argv));
    ::_exit(127);
  }
  ::close(fds[1]);
  if (pid < 0) throw SimulationFailure(std::string("cannot start the replay's process: ") + std::strerror(errno));
  Child child(pid);
  ::fcntl(output.fd, F_SETFL, ::fcntl(output.fd, F_GETFL) | O_NONBLOCK);

  // The pipe's other end may also be held by replays that other threads started meanwhile (forked
  // before theirs closed it), so its end of file says little: the reply, or the exit, ends the wait.
  std::string buffer;
  std::optional<Frame> reply;
  int status = 0;
  bool ended = false;
  while (!reply) {
    {
      py::gil_scoped_release nogil;
      pollfd p{output.fd, POLLIN, 0};
      (void)::poll(&p, 1, kPollMs);
      drain(output.fd, buffer);
      if (child.ended(status)) {
        ended = true;
        drain(output.fd, buffer);  // everything it wrote is in the pipe now
      }
    }
    while (std::optional<Frame> f = next_frame(buffer)) {
      if (f->kind != 'p') {
        reply = std::move(f);
        break;
      }
      if (on_progress && f->payload.size() == sizeof(engine::ProgressUpdate)) {
        engine::ProgressUpdate u;
        std::memcpy(&u, f->payload.data(), sizeof u);
        on_progress(u);  // a Python exception here ends the replay (Child's destructor) and propagates
      }
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
