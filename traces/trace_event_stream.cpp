#include "traces/trace_event_stream.hpp"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace stepsim {

TraceEventStream::TraceEventStream(std::ostream& out, std::string_view other_data) : out_(out) {
  out_ << "{\"displayTimeUnit\":\"ms\",\"otherData\":" << other_data << ",\"traceEvents\":[\n";
}

void TraceEventStream::event(std::string_view json_object) {
  if (!first_) out_ << ",\n";
  first_ = false;
  out_ << json_object;
}

void TraceEventStream::close() { out_ << "\n]}\n"; }

std::string trace_us(int64_t ns) {
  const int64_t a = std::llabs(ns);
  return fmt::format("{}{}.{:03}", ns < 0 ? "-" : "", a / 1000, a % 1000);
}

int64_t trace_ns(double seconds) { return std::llround(seconds * 1e9); }

}  // namespace stepsim
