// Communication classes: what a communication op moves, one row each. The engine accounts a
// GPU's transfers and exposed waits per class and reads how to count them from the row; results
// hold one value per class, and reports, traces and JSON loop over this table. A new class is a
// row here, its op kinds in vocabulary/op_kinds.hpp and the workload code that emits them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>

namespace stepsim::ops {

// Row indices of kCommClassTable (compute ops are class None). The order is part of the outputs:
// traces and the HTML report mark idle time with a bit mask, bit c for class c.
enum class CommClass : uint8_t { None, Ep, Pp, Dp, Other, Tp, Cp, Host, Count_ };

// When a communication op the compute stream waits for counts as exposed communication.
enum class Exposure : uint8_t {
  // From the kernel's start: a collective or all-to-all occupies the GPU while it waits for slower
  // peers too (what a profiler shows as communication).
  FromStart,
  // Only while its data moves: a pipeline receive whose sender has not produced the data yet is
  // the sender's stage still computing (bubble).
  WhileMoving,
};

struct CommClassInfo {
  // "ep": the JSON keys `ep_comm_s`, `exposed_by_kind.ep_s`, `ranks[].exposed_ep_s`; the trace's
  // "exposed: ep".
  const char* name;
  const char* label;  // "EP": text and HTML reports
  Exposure exposure;
  // Its ops still running after a GPU's last compute op count as exposed: the step waits for them
  // (a trailing gradient reduction). Pipeline sends in the tail feed another stage instead.
  bool exposed_in_tail;
  // This class reports that trailing wait (exposed_dp_s and the trace's "exposed: dp" hold it).
  bool reports_tail;
  // Its exposed time while the waiting op has no overlapped F&B partner is reported
  // (exposed_by_kind.outside_fb_pairs_s): where nothing else could hide the transfer.
  bool reports_unpaired;
  bool in_json;  // has the per-class JSON fields
  // A copy engine moves it between the GPU and its host's memory: no SMs, no network. The op lasts
  // its setup_s (the workload's bytes over the host link) and has no flows.
  bool copy_engine = false;
};

inline constexpr CommClassInfo kCommClassTable[] = {
    // name    label    exposure               in tail reports tail / unpaired  JSON
    {"", "", Exposure::FromStart, true, false, false, false},  // None: not communication
    {"ep", "EP", Exposure::FromStart, true, false, true, true},      // expert-parallel all-to-all
    {"pp", "PP", Exposure::WhileMoving, false, false, false, true},  // pipeline sends and receives
    {"dp", "DP", Exposure::FromStart, true, true, false, true},      // ZeRO / FSDP / HSDP collectives
    {"other", "other", Exposure::FromStart, true, false, false, false},
    {"tp", "TP", Exposure::FromStart, true, false, false, true},  // tensor-parallel all-gathers, reduce-scatters
    {"cp", "CP", Exposure::FromStart, true, false, false, true},  // context-parallel K/V exchanges
    // activations offloaded to host memory and reloaded (parallel.cpu_offload_layers)
    {"host", "host copy", Exposure::FromStart, true, false, false, false, true},
};
inline constexpr size_t kCommClasses = std::size(kCommClassTable);
static_assert(kCommClasses == size_t(CommClass::Count_), "one row per CommClass");
static_assert(kCommClasses <= 8, "idle time marks its classes in a byte-wide mask");

inline const CommClassInfo& comm_class_info(size_t c) { return kCommClassTable[c]; }

// One value per communication class, indexed by class.
struct PerCommClass {
  std::array<double, kCommClasses> values{};
  double& operator[](size_t c) { return values[c]; }
  double operator[](size_t c) const { return values[c]; }
  double& operator[](CommClass c) { return values[size_t(c)]; }
  double operator[](CommClass c) const { return values[size_t(c)]; }
};

}  // namespace stepsim::ops
