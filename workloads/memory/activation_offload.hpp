// Which layers' saved activations leave the GPU between their forward and backward, and when, as
// Transformer Engine schedules them for Megatron-LM's --cpu-offloading-num-layers n (TE 2.10's
// DefaultOffloadSynchronizer, transformer_engine/pytorch/cpu_offload.py): layers 0 .. n-1 are
// offloaded; layer i's copy to host memory starts after its forward and must be done, and its
// memory released, before the forward of layer L - n + i; its copy back starts before the backward
// of layer L - 1 - n + i, and its backward waits for it. At most L - n layers' activations are on
// the GPU at once (TE's documented (num_layers - num_offloaded_layers) x T). TE up to 2.9
// (AsyncDoubleBufferGroupOffloadHandler) released each layer at the end of a window of L / n layers
// instead, keeping about one layer more. One pipeline stage holds the whole model (Megatron-LM
// offloads only without pipeline parallelism, validate_plan checks it), so layer indices are the
// model's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim {

class ActivationOffload {
 public:
  explicit ActivationOffload(const Plan& plan)
      : offloaded_(plan.parallel.cpu_offload_layers), layers_(plan.model.num_hidden_layers) {}

  bool on() const { return offloaded_ > 0; }
  bool offloaded(int64_t layer) const { return layer >= 0 && layer < offloaded_; }
  // The offloaded layer whose copy must be done, and memory released, before layer `layer`'s
  // forward; -1 if none.
  int64_t released_before_forward_of(int64_t layer) const { return offloaded_or_none(layer - (layers_ - offloaded_)); }
  // The offloaded layer whose copy back starts before layer `layer`'s backward; -1 if none.
  int64_t reloaded_before_backward_of(int64_t layer) const {
    return offloaded_or_none(layer - (layers_ - 1 - offloaded_));
  }

  // The most saved bytes on the GPU at once over one microbatch's forward and backward, given each
  // layer's (`saved`, by layer) and what the LM head adds on top once every layer has run
  // (`head`). Without offloading: every layer's plus the head's. The backward reloads in the mirror
  // order of the forward's releases, so the forward's peak is the peak.
  double peak_saved(const std::vector<double>& saved, double head) const {
    std::vector<double> sum(saved.size() + 1, 0.0);  // prefix sums over layers
    for (size_t l = 0; l < saved.size(); ++l) sum[l + 1] = sum[l] + saved[l];
    const auto range = [&](int64_t first, int64_t last) {  // layers first .. last, clipped
      first = std::max<int64_t>(first, 0), last = std::min<int64_t>(last, int64_t(saved.size()) - 1);
      return first > last ? 0.0 : sum[size_t(last + 1)] - sum[size_t(first)];
    };
    double peak = 0;
    // Before layer j's forward (j = L: the head's), the offloaded layers released so far are gone.
    for (int64_t j = 0; j <= layers_; ++j) {
      const double kept = range(offloaded_, j) + range(j - (layers_ - offloaded_) + 1, std::min(j, offloaded_ - 1)) +
                          (j == layers_ ? head : 0.0);
      peak = std::max(peak, kept);
    }
    return peak;
  }

  // How long one microbatch's compute waits for the copies when every layer's forward takes
  // `forward_s`, its backward `backward_s` and a layer's copy either way `copy_s`: the schedule above
  // run on one copy stream, in closed form by recurrence (the replay times each layer and copy).
  double copy_wait_s(double forward_s, double backward_s, double copy_s) const {
    if (!on()) return 0;
    std::vector<double> done(size_t(offloaded_), 0.0);
    double t = 0, copy_free = 0;
    for (int64_t j = 0; j < layers_; ++j) {
      if (const int64_t r = released_before_forward_of(j); r >= 0) t = std::max(t, done[size_t(r)]);
      t += forward_s;
      if (offloaded(j)) copy_free = done[size_t(j)] = std::max(t, copy_free) + copy_s;
    }
    const double forward_wait = t - double(layers_) * forward_s;
    t = copy_free = 0;  // every copy out ended before the last layer's forward began
    for (int64_t j = layers_ - 1; j >= 0; --j) {
      if (const int64_t r = reloaded_before_backward_of(j); r >= 0) copy_free = done[size_t(r)] = std::max(t, copy_free) + copy_s;
      if (offloaded(j)) t = std::max(t, done[size_t(j)]);
      t += backward_s;
    }
    return forward_wait + t - double(layers_) * backward_s;
  }

 private:
  int64_t offloaded_or_none(int64_t layer) const { return offloaded(layer) ? layer : -1; }
  int64_t offloaded_ = 0;
  int64_t layers_ = 0;
};

}  // namespace stepsim
