// Streams a Chrome trace-event file: one JSON object per event, written as it is produced, so a
// big trace never sits in memory as a JSON tree. Writers of extra tracks (e.g. memory counters)
// append their events through the same stream.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace stepsim {

class TraceEventStream {
 public:
  // Writes the header; `other_data` is a JSON object ("{}" for none).
  TraceEventStream(std::ostream& out, std::string_view other_data);
  // One event: a complete JSON object.
  void event(std::string_view json_object);
  // Closes the array and the top-level object; call once, after the last event.
  void close();

 private:
  std::ostream& out_;
  bool first_ = true;
};

// Microseconds with nanosecond resolution from integer nanoseconds ("12.345"): every time in the
// file is on one grid, so back-to-back events on a track never overlap by rounding.
std::string trace_us(int64_t ns);
int64_t trace_ns(double seconds);

}  // namespace stepsim
