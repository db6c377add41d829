// The order follows DualPipeV.step() (deepseek-ai/DualPipe, dualpipe/dualpipev.py) step by step;
// DualPipe.step() (dualpipe.py) runs the same eight steps on each half of its ranks. The counters
// play the role of current_f_chunk_id / current_b_chunk_id, the FIFO the role of the
// WeightGradStore queue.
#include "schedules/dualpipe_steps.hpp"

#include <deque>
#include <stdexcept>

namespace stepsim::sched {

namespace {

// Emits one rank's ops, numbering microbatches per chunk in issue order as DualPipeV does.
class Emitter {
 public:
  explicit Emitter(std::vector<ChunkOp>& out) : out_(out) {}

  void f(int c) { out_.push_back({Pass::F, false, next_f(c), {}}); }
  void b(int c, bool zero_bubble = false) {
    const ChunkRef ref = next_b(c);
    if (zero_bubble) pending_w_.push_back(ref);
    out_.push_back({Pass::B, zero_bubble, {}, ref});
  }
  // DualPipe runs the weight gradients it deferred first-in first-out.
  void w() {
    if (pending_w_.empty()) throw std::logic_error("dualpipe: W without a deferred B");
    out_.push_back({Pass::W, false, {}, pending_w_.front()});
    pending_w_.pop_front();
  }
  // Overlapped pair: forward of chunk cf and a full backward (no deferral) of chunk cb.
  void fb(int cf, int cb) {
    const ChunkRef fr = next_f(cf);
    out_.push_back({Pass::FB, false, fr, next_b(cb)});
  }
  bool drained() const { return pending_w_.empty(); }

 private:
  ChunkRef next_f(int c) { return {f_[c]++, c}; }
  ChunkRef next_b(int c) { return {b_[c]++, c}; }

  std::vector<ChunkOp>& out_;
  int32_t f_[2] = {0, 0};
  int32_t b_[2] = {0, 0};
  std::deque<ChunkRef> pending_w_;
};

}  // namespace

std::vector<ChunkOp> dualpipe_steps(int64_t P, int64_t r, int64_t N) {
  const bool last_rank = r == P - 1;  // DualPipe: the middle rank
  std::vector<ChunkOp> ops;
  ops.reserve(size_t(6 * N));
  Emitter e(ops);

  // Step 1 (nF0): fill the V's first arm.
  for (int64_t i = 0; i < 2 * (P - r - 1); ++i) e.f(0);
  // Step 2 (nF0F1).
  for (int64_t i = 0; i < r + 1; ++i) {
    e.f(0);
    e.f(1);
  }
  // Step 3 (nB1W1F1): zero-bubble backward, its W right away, then a forward.
  for (int64_t i = 0; i < P - r - 1; ++i) {
    e.b(1, true);
    e.w();
    e.f(1);
  }
  // Step 4 (main, nF0B1F1B0): overlapped pairs. The last rank does not overlap its first pair.
  for (int64_t i = 0; i < N - 2 * P + r + 1; ++i) {
    if (i == 0 && last_rank) {
      e.f(0);
      e.b(1);
    } else {
      e.fb(0, 1);
    }
    e.fb(1, 0);
  }
  // Step 5 (nB1F1B0).
  for (int64_t i = 0; i < P - r - 1; ++i) {
    e.b(1);
    e.fb(1, 0);
  }
  // Step 6 (nB1B0): the second half defers W; where the switch falls depends on rank parity.
  bool zero_bubble = false;
  const int64_t step6 = r + 1;
  for (int64_t i = 0; i < step6; ++i) {
    if (i == step6 / 2 && r % 2 == 1) zero_bubble = true;
    e.b(1, zero_bubble);
    if (i == step6 / 2 && r % 2 == 0) zero_bubble = true;
    e.b(0, zero_bubble);
  }
  // Step 7 (nWB0).
  for (int64_t i = 0; i < P - r - 1; ++i) {
    e.w();
    e.b(0, true);
  }
  // Step 8 (nW): drain the deferred weight gradients.
  for (int64_t i = 0; i < r + 1; ++i) e.w();
  if (!e.drained()) throw std::logic_error("dualpipe: weight gradients left over");
  return ops;
}

}  // namespace stepsim::sched
