// What one simulated step produces. Per rank (GPU), the step splits exactly into
//   compute_s + exposed_comm_s + bubble_s == step_time_s
// where compute_s is the compute stream's busy time, exposed_comm_s the part of its idle time
// during which a communication kernel it waits for is running (a collective or all-to-all from
// its start, peers' lateness included; a pipeline transfer while its data moves), and bubble_s the
// rest of its idle time (waiting for another stage's compute or for the schedule, including the
// idle tail until the whole step ends).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/engine/op.hpp"

namespace stepsim {

struct SimOptions {
  bool quiet = false;         // no progress line on stderr
  bool record_spans = false;  // keep every op's (rank, stream, start, end, tag): memory grows per op
};

struct RankResult {
  int64_t rank = 0;  // the GPU id
  double step_time_s = 0;
  double compute_s = 0;
  double exposed_comm_s = 0;
  double bubble_s = 0;
  // Data-moving time of this GPU's transfers by class: the union over the class's ops of their
  // flows' intervals (from both ends joining to the end); a time two classes share counts in both.
  double ep_comm_s = 0;
  double pp_comm_s = 0;
  double dp_comm_s = 0;
  // Exposed communication by what the compute stream waited for (a wait on two kinds at once
  // counts in both), and the part spent outside overlapped F&B pairs (warm-up, cool-down, lone
  // chunks), where nothing else could hide the transfer.
  double exposed_ep_s = 0;
  double exposed_pp_s = 0;
  double exposed_dp_s = 0;
  double exposed_unpaired_s = 0;
};

struct Span {
  int32_t rank = 0;
  uint8_t stream = 0;  // 0 = compute
  double start_s = 0;
  double end_s = 0;
  engine::Tag tag;
};

struct SimResult {
  std::string workload;
  std::string schedule;
  std::string mode;  // "full", or what the workload aggregated
  double step_time_s = 0;  // end of the whole step: the last op on any rank
  std::vector<RankResult> ranks;
  // ep/pp/dp comm seconds of the most loaded rank: the one with the largest
  // compute_s + exposed_comm_s (the least bubble), lowest id on ties.
  int64_t critical_rank = 0;
  double ep_comm_s = 0;
  double pp_comm_s = 0;
  double dp_comm_s = 0;
  uint64_t activities = 0;  // SimGrid activities started: Execs + transfers
  uint64_t ops = 0;         // ops replayed
  double wall_s = 0;
  bool has_spans = false;
  std::vector<Span> spans;
};

}  // namespace stepsim
