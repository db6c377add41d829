#include "traces/memory_counters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace stepsim {

void write_memory_counters(const SimResult& result, const TraceOptions& opt, TraceEventStream& ev) {
  const int64_t gpn = std::max<int64_t>(1, opt.gpus_per_node);
  const std::set<int32_t> wanted(opt.ranks.begin(), opt.ranks.end());
  // Samples are in time order per GPU; the value in effect when the window opens is written at its
  // start so the counter never begins blank.
  std::map<int32_t, double> before_window;
  const auto put = [&](int32_t rank, double t_s, double bytes) {
    ev.event(fmt::format(R"({{"ph":"C","name":"memory GPU {}","cat":"memory","ts":{},"pid":{},"tid":0,"args":{{"GB":{:.6f}}}}})",
                         rank, trace_us(trace_ns(t_s)), rank / gpn, bytes / 1e9));
  };
  for (const MemorySample& s : result.memory_samples) {
    if (!wanted.empty() && wanted.count(s.rank) == 0) continue;
    if (s.t_s < opt.window_begin_s) {
      before_window[s.rank] = s.bytes;
      continue;
    }
    if (s.t_s > opt.window_end_s) continue;
    if (auto it = before_window.find(s.rank); it != before_window.end()) {
      if (s.t_s > opt.window_begin_s) put(s.rank, opt.window_begin_s, it->second);
      before_window.erase(it);
    }
    put(s.rank, s.t_s, s.bytes);
  }
  for (const auto& [rank, bytes] : before_window) put(rank, opt.window_begin_s, bytes);
}

}  // namespace stepsim
