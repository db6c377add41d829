// What the Python module and its replay process (python/binding/replay_main.cpp, `_replay`) say
// to each other. The module writes one request (how to load the plan, what to write, whether to
// report progress) to the process's stdin; the process answers on descriptor 3 with frames: a
// kind byte, the payload's length (8 bytes), the payload. 'p' progress (an engine::ProgressUpdate)
// any number of times, then one reply: 'o' the `stepsim simulate --json` text, 'c' a ConfigError's
// message, 'm' out of memory, 'e' another error's message.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "simulator/engine/progress.hpp"

namespace stepsim::python {

inline constexpr int kReplyFd = 3;

struct ReplayRequest {
  // The plan: a config file's text as read when it was loaded (`path` names it; loaded as
  // load_plan_text does), or YAML text (a dict's, an import's) read against `base_dir`.
  bool from_file = true;
  std::string text, path, base_dir;
  std::vector<std::string> overrides;  // --set texts
  std::string trace_path;              // where to write the trace (empty: none): the caller's temporary file
  std::string trace_target;            // the file it will replace (absolute), refused if an input of the plan
  std::string trace_ranks, trace_window;
  bool print_progress = false;         // the command line's progress line on stderr
  bool relay_progress = false;         // 'p' frames
};

std::string encode(const ReplayRequest& request);
// Throws std::runtime_error on a malformed request.
ReplayRequest decode(const std::string& bytes);

// One frame on `fd`; a parent gone is nobody to tell.
void send_frame(int fd, char kind, const std::string& payload);
void send_progress(int fd, const engine::ProgressUpdate& update);

// Runs `work` and sends its result, or the error it threw, as the reply frame on `fd`.
void reply(int fd, const std::function<std::string()>& work);

}  // namespace stepsim::python
