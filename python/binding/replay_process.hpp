// A replay for Python, in a process of its own: SimGrid allows one engine per process, and a
// Python process runs many replays, one after another or several at once from a thread or process
// pool. The calling thread starts `_replay` (replay_main.cpp), hands it the request
// (replay_protocol.hpp), waits for it without the GIL, relays its progress to a Python callback,
// and on Ctrl-C (or interrupt_all()) kills it and raises KeyboardInterrupt: nothing of the replay
// outlives the call.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "python/binding/replay_protocol.hpp"

namespace stepsim::python {

// A replay that failed without a ConfigError (its process died, the engine threw): raised in
// Python as stepsim.SimulationError.
class SimulationFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs `program` (the `_replay` executable) in `cwd` on `request` and returns its reply. Call with
// the GIL held; it is released while the replay runs. `on_progress` (may be empty) is called with
// the GIL held for each progress frame. A ConfigError in the replay is rethrown as ConfigError with
// its message, std::bad_alloc as std::bad_alloc, anything else (or a process that died) as
// SimulationFailure. A pending Python signal (Ctrl-C) or interrupt_all() ends the process and
// throws pybind11::error_already_set with the exception Python set (KeyboardInterrupt).
std::string run_replay(const std::string& program, const std::string& cwd, const ReplayRequest& request,
                       const std::function<void(const engine::ProgressUpdate&)>& on_progress);

// Stops every run_replay of this process (each raises KeyboardInterrupt in its thread). The
// package's SIGINT handler calls it, so that Ctrl-C also ends the replays of a thread pool.
void interrupt_all();

}  // namespace stepsim::python
