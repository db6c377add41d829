// A replay for Python, run in a forked child: SimGrid allows one engine per process, and a Python
// process runs many replays, one after another or several at once from a thread or process pool.
// The calling thread waits without the GIL, relays the child's progress to a Python callback,
// and on Ctrl-C (or stepsim.interrupt()) kills the child and raises KeyboardInterrupt: nothing
// of the replay outlives the call.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "simulator/engine/progress.hpp"

namespace stepsim::python {

// What the child gives its work to report progress through (called in the child).
class ChildChannel {
 public:
  explicit ChildChannel(int fd) : fd_(fd) {}
  void progress(const engine::ProgressUpdate& update) const;

 private:
  int fd_;
};

// A replay that failed without a ConfigError (the child died, or the engine threw): raised in
// Python as stepsim.SimulationError.
class SimulationFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs `work` in a forked child and returns the text it produced. Call with the GIL held; it is
// released while the child runs. `on_progress` (may be empty) is called with the GIL held for
// each update the work sent. A ConfigError in the child is rethrown as a ConfigError with its
// message, std::bad_alloc as std::bad_alloc, anything else (or a child that died) as
// SimulationFailure. A pending Python signal (Ctrl-C) or interrupt_all() ends the child and throws
// pybind11::error_already_set with the exception Python set (KeyboardInterrupt).
std::string run_in_child(const std::function<std::string(const ChildChannel&)>& work,
                         const std::function<void(const engine::ProgressUpdate&)>& on_progress);

// Stops every run_in_child of this process (each raises KeyboardInterrupt in its thread). The
// module's SIGINT handler calls it, so that Ctrl-C also ends the replays of a thread pool.
void interrupt_all();

}  // namespace stepsim::python
