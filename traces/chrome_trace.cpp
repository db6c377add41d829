#include "traces/chrome_trace.hpp"

#include <fmt/format.h>

#include <set>
#include <utility>

namespace stepsim {
namespace {

std::string event_name(const engine::Tag& t) {
  std::string name = engine::to_string(t.kind);
  if (t.phase != engine::Phase::None) name += std::string(" ") + engine::to_string(t.phase);
  if (t.layer != engine::kNoIndex) name += fmt::format(" L{}", t.layer);
  if (t.microbatch != engine::kNoIndex) name += fmt::format(" mb{}", t.microbatch);
  return name;
}

const char* stream_name(int stream) { return stream == 0 ? "compute" : "comm"; }

}  // namespace

void write_chrome_trace(const SimResult& result, std::ostream& out) {
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  const auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  // Name each GPU's process and stream threads so the viewer shows them readably.
  std::set<std::pair<int32_t, int>> threads;
  for (const Span& s : result.spans) threads.insert({s.rank, s.stream});
  std::set<int32_t> ranks;
  for (const auto& [rank, stream] : threads) {
    if (ranks.insert(rank).second) {
      sep();
      out << fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":"GPU {}"}}}})", rank, rank);
    }
    sep();
    out << fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"{} {}"}}}})", rank,
                       stream, stream_name(stream), stream);
  }
  for (const Span& s : result.spans) {
    sep();
    out << fmt::format(
        R"({{"ph":"X","name":"{}","cat":"{}","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},"args":{{"chunk":{}}}}})",
        event_name(s.tag), stream_name(s.stream), s.rank, s.stream, s.start_s * 1e6, (s.end_s - s.start_s) * 1e6,
        int(s.tag.chunk));
  }
  out << "\n]}\n";
}

}  // namespace stepsim
