// `_replay`: the process the Python module runs a replay in (one per call: SimGrid allows one
// engine per process). It does what `stepsim simulate --json` does between loading the plan and
// printing its report, in the same order, and links what the command line links (jemalloc: the
// replay allocates per activity). Request on stdin, frames on descriptor 3
// (python/binding/replay_protocol.hpp). Started by the module only; nothing else should run it.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

#include "python/binding/replay_protocol.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/io/command_files.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/report/command_json.hpp"
#include "simulator/runs/mean_load_step.hpp"
#include "simulator/runs/simulate.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/trace_selection.hpp"
#include "vocabulary/config_error.hpp"

namespace stepsim::python {
namespace {

std::string read_request() {
  std::string bytes;
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(0, chunk, sizeof chunk);
    if (n > 0)
      bytes.append(chunk, size_t(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  return bytes;
}

// The config file the plan was read from, recorded as the command line records it (the plan is
// loaded from the text read then; the file may have changed or gone since, or be a FIFO now).
void note_config_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return;
  io::note_input(fd, path, "config");  // first in the record: nothing to clash with yet
  ::close(fd);
}

std::string replay(const ReplayRequest& r) {
  // The trace may replace none of the plan's inputs (its config file, model.config_json, a hardware
  // profile, a routing load file), checked here, where the plan's relative paths mean what they
  // meant when it was loaded, in the command line's order: the plan's files, the trace, the load file.
  const io::CommandFiles files;
  if (r.from_file) note_config_file(r.path);
  const Plan plan = r.from_file ? load_plan_text(r.text, r.path, r.overrides)
                                : load_plan_from_string(r.text, r.path, r.overrides, r.base_dir);
  if (!r.trace_target.empty()) io::claim_output(r.trace_target, "trace");
  const TraceOptions trace_opt = trace_options(plan, r.trace_ranks, r.trace_window);
  SimOptions options;
  options.quiet = !r.print_progress;
  options.record_spans = !r.trace_path.empty();
  options.span_ranks = trace_opt.ranks;
  options.counted = check_replay_size(plan);
  if (r.relay_progress) options.progress = [](const engine::ProgressUpdate& u) { send_progress(kReplyFd, u); };
  const std::optional<double> mean_load_s = mean_load_step_s(plan, !r.print_progress);
  const SimResult result = simulate(plan, options);
  if (!r.trace_path.empty()) {
    // The caller's temporary file: it renames it into place once this reply says it is whole.
    std::ofstream out(r.trace_path, std::ios::binary | std::ios::trunc);
    write_chrome_trace(result, trace_opt, out);
    out.flush();
    if (!out) throw ConfigError("trace: cannot write (" + std::string(std::strerror(errno)) + "); nothing was written");
  }
  return io::json_text(simulate_command_json(plan, result, mean_load_s));
}

}  // namespace
}  // namespace stepsim::python

int main() {
  using namespace stepsim::python;
  reply(kReplyFd, [] { return replay(decode(read_request())); });
  return 0;
}
