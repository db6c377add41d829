// Helpers for the schedule tests: a compact text form of a rank's ops ("F0.3" = forward of chunk 0,
// microbatch 3; "B1.2z" = zero-bubble backward; "F1.2&B0.0" = an overlapped pair; "W0.2").
#pragma once

#include <string>
#include <vector>

#include "schedules/schedule.hpp"

namespace stepsim::test {

inline std::string ref_text(const char* pass, const sched::ChunkRef& r) {
  return std::string(pass) + std::to_string(r.chunk) + "." + std::to_string(r.mb);
}

inline std::string op_text(const sched::ChunkOp& op) {
  switch (op.pass) {
    case sched::Pass::F: return ref_text("F", op.fwd);
    case sched::Pass::B: return ref_text("B", op.bwd) + (op.zero_bubble ? "z" : "");
    case sched::Pass::W: return ref_text("W", op.bwd);
    case sched::Pass::FB: return ref_text("F", op.fwd) + "&" + ref_text("B", op.bwd);
  }
  return "?";
}

inline std::string program_text(const std::vector<sched::ChunkOp>& ops) {
  std::string s;
  for (const auto& op : ops) {
    if (!s.empty()) s += ' ';
    s += op_text(op);
  }
  return s;
}

}  // namespace stepsim::test
