// A pipeline schedule: which chunk ops (forward, backward, weight-gradient, overlapped
// forward&backward) each pipeline rank runs, in which order, and everything that order implies
// (stage placement, closed-form bubble, activations in flight, parameter copies, sends per
// microbatch, which plans it can run). Roofline, memory, report and validation ask the schedule;
// nobody switches on its name. A schedule knows no times, bytes or links (the workload and the
// engine add those); its closed forms take per-chunk times as arguments.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim::sched {

// F: forward of one chunk. B: backward (input gradient; also the weight gradient unless
// zero_bubble defers it). W: a deferred weight gradient. FB: a forward and a backward chunk run
// together so that one's compute hides the other's communication (DualPipe's F&B).
enum class Pass : uint8_t { F, B, W, FB };

const char* to_string(Pass p);

// One microbatch on one of a rank's chunks (chunk 0 .. chunks_per_rank()-1).
struct ChunkRef {
  int32_t mb = -1;
  int32_t chunk = 0;
};

struct ChunkOp {
  Pass pass = Pass::F;
  // B or the backward half of FB: only the input gradient; the W of `bwd` comes later as a W op.
  bool zero_bubble = false;
  ChunkRef fwd;  // F, and the forward half of FB
  ChunkRef bwd;  // B, W, and the backward half of FB

  bool has_forward() const { return pass == Pass::F || pass == Pass::FB; }
  bool has_backward() const { return pass == Pass::B || pass == Pass::FB; }
};

struct StageLoc {
  int64_t rank = 0;
  int32_t chunk = 0;
};

// Per-chunk times for the closed forms (DeepSeek's notation): F forward, B the whole backward,
// W its weight-gradient part, FB an overlapped forward&backward pair.
struct ChunkTimes {
  double f_s = 1, b_s = 2, w_s = 1, fb_s = 3;
};

// What a schedule is built from.
struct ScheduleShape {
  int64_t ranks = 1;
  int64_t microbatches = 1;
  int64_t virtual_stages = 0;  // chunks per rank of the interleaved schedule; 0 = not set (its default)
};

// A plan the schedule cannot run: the config key to change and a message that says how.
class ScheduleError : public std::invalid_argument {
 public:
  ScheduleError(std::string key, const std::string& what) : std::invalid_argument(what), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// A setting the schedule fixes in the plan around it, with the one value it can take there (FSDP:
// parallel.pp 1 and parallel.zero 3). `value` is written as in a config (YAML); `message` is the
// error when the plan has another value and nothing may change it.
struct NeededSetting {
  std::string key;
  std::string value;
  std::string message;
};

// What sets one schedule apart besides its placement, order and closed forms, stated once as data.
struct ScheduleTraits {
  const char* name = "";  // the config's `schedule:` value
  const char* title = nullptr;  // how error messages name it ("DualPipeV"); nullptr: the name
  // Some backwards leave their weight gradients for later W ops (zero bubble), which needs a
  // backward split into input and weight gradient (parallel.split_backward).
  bool defers_weight_gradients = false;
  // Parameters sharded over data parallelism and gathered per layer (FSDP, ZeRO-3).
  bool shards_parameters = false;
  // The scenario of DeepSeek's published profiler trace, which compare and calibrate need: no LM
  // head, no optimizer step.
  bool profile_capture = false;
};

class Schedule {
 public:
  Schedule(const ScheduleShape& shape, const ScheduleTraits& traits)
      : ranks_(shape.ranks), microbatches_(shape.microbatches), traits_(traits) {}
  virtual ~Schedule() = default;

  const char* name() const { return traits_.name; }
  const char* title() const { return traits_.title != nullptr ? traits_.title : traits_.name; }
  virtual int32_t chunks_per_rank() const = 0;
  // Stage placement: stage s forwards to stage s + 1 within its path (see path_stages).
  virtual int64_t stage_of(int64_t rank, int32_t chunk) const = 0;
  virtual StageLoc where(int64_t stage) const = 0;
  // Rank `rank`'s chunk ops in execution order.
  virtual std::vector<ChunkOp> program(int64_t rank) const = 0;

  int64_t ranks() const { return ranks_; }
  int64_t microbatches() const { return microbatches_; }
  int64_t stages() const { return ranks_ * chunks_per_rank(); }

  // --- Placement of layers.
  // Stages of one forward path. Stages [k * path_stages(), (k+1) * path_stages()) form path k;
  // a microbatch enters at the path's first stage and its loss is at the path's last. One path
  // except DualPipe, whose two directions run over the same layers (two parameter copies).
  virtual int64_t path_stages() const { return stages(); }
  // The partition of the model's layers has path_stages() slots; stage s runs slot s % path_stages().
  int64_t layer_slot(int64_t stage) const { return stage % path_stages(); }
  // Whether a rank's stages sit at both ends of the path (a V), so the layer partition balances
  // the rank's pair of stages rather than each stage.
  virtual bool v_shape() const { return false; }
  // Copies of the model's parameters the ranks hold together.
  virtual int32_t parameter_copies() const { return 1; }
  // Microbatches each chunk runs (DualPipe: half of them per direction).
  virtual int64_t microbatches_per_chunk() const { return microbatches(); }

  // --- Closed forms.
  // Every rank's idle time in a step with communication off, given per-chunk times.
  virtual double bubble_s(const ChunkTimes& t) const = 0;
  // A rank's busy time: each of its forwards and backwards once.
  double busy_s(const ChunkTimes& t) const {
    return double(microbatches_per_chunk() * chunks_per_rank()) * (t.f_s + t.b_s);
  }
  // Bubble over busy time with B = 2F, W = F and no F&B gain (the seed's assumption).
  double bubble_share() const;

  // --- Implied by the order (counted from program()).
  // Peak microbatches whose activations rank `rank` holds, in units of all its layers: forwards
  // run minus backwards run, over chunks_per_rank() (an F&B pair counts its forward first).
  double in_flight_microbatches(int64_t rank) const;
  // Pipeline sends (activations and gradients to another rank) per microbatch, busiest rank.
  double sends_per_microbatch() const;
  // Whether the order pairs a forward with a backward chunk (F&B), so one hides the other's
  // communication; chunks outside such pairs run alone.
  bool overlaps_pairs() const;

  // --- What the plan around it must be (ScheduleTraits).
  // The step ends with an optimizer step (ZeRO collectives); the profiler capture has none.
  bool optimizer_step() const { return !traits_.profile_capture; }
  // The last stage also runs the LM head; the profiler capture runs transformer layers only.
  bool runs_lm_head() const { return !traits_.profile_capture; }
  bool is_profile_capture() const { return traits_.profile_capture; }
  bool shards_parameters() const { return traits_.shards_parameters; }
  bool defers_weight_gradients() const { return traits_.defers_weight_gradients; }
  // The settings of `plan` this schedule needs changed, each to the one value it can take (FSDP:
  // no pipeline and ZeRO-3; every other schedule: ZeRO-1 for a ZeRO-3 plan, one chunk per rank for
  // virtual stages; zero bubble: the backward split). Empty when the plan suits it. The config
  // loader brings them when a --set switches the schedule; check_plan refuses a plan that has any.
  virtual std::vector<NeededSetting> settings_needed(const Plan& plan) const;
  // Throw ScheduleError where the schedule cannot run the shape it was built with (too few
  // microbatches, virtual stages it does not use) or the rest of the plan does not suit it.
  virtual void check_shape(const ScheduleShape& shape) const;
  virtual void check_plan(const Plan& plan) const;

 protected:
  // The 1F1B pattern over `total` ops of each kind: `warmup` forwards, then one forward and one
  // backward at a time, then the remaining backwards. forward(k) / backward(k) emit the k-th.
  template <class Forward, class Backward>
  static void one_forward_one_backward(int64_t total, int64_t warmup, Forward forward, Backward backward) {
    for (int64_t k = 0; k < warmup; ++k) forward(k);
    for (int64_t k = 0; k < total - warmup; ++k) {
      forward(warmup + k);
      backward(k);
    }
    for (int64_t k = total - warmup; k < total; ++k) backward(k);
  }

 private:
  int64_t ranks_;
  int64_t microbatches_;
  ScheduleTraits traits_;
};

// --- Placements a schedule derives from, adding only its order and closed forms.

// One chunk per rank, rank r running stage r (GPipe, 1F1B, ZB-H1, FSDP's single rank, the capture).
class LinearSchedule : public Schedule {
 public:
  using Schedule::Schedule;
  int32_t chunks_per_rank() const final { return 1; }
  int64_t stage_of(int64_t rank, int32_t) const final { return rank; }
  StageLoc where(int64_t stage) const final { return {stage, 0}; }
};

// The V DualPipeV and ZB-V share: P ranks hold 2P stages; rank r runs stage r as chunk 0 (forward
// flows to rank r+1) and stage 2P-1-r as chunk 1 (forward flows to rank r-1), so the turn at rank
// P-1 stays on the rank. Both need at least two microbatches per rank to fill the V.
class VShapedSchedule : public Schedule {
 public:
  using Schedule::Schedule;
  int32_t chunks_per_rank() const final { return 2; }
  int64_t stage_of(int64_t rank, int32_t chunk) const final { return chunk == 0 ? rank : 2 * ranks() - 1 - rank; }
  StageLoc where(int64_t stage) const final {
    return stage < ranks() ? StageLoc{stage, 0} : StageLoc{2 * ranks() - 1 - stage, 1};
  }
  bool v_shape() const final { return true; }
  void check_shape(const ScheduleShape& shape) const override;
};

}  // namespace stepsim::sched
