// The synthetic workload: one pipeline of parallel.pp ranks, each on its own node (pp nodes x 1
// GPU), with fixed per-chunk times, for studying a schedule in isolation.
//   F = workload.f_s, B = workload.b_s (input + weight gradient), W = workload.w_s (part of B):
//   a zero-bubble B costs b_s - w_s and its deferred W costs w_s; an F&B pair costs workload.fb_s
//   (0 = f_s + b_s, i.e. no overlap gain).
// send_bytes = 0: no communication at all -- a chunk waits directly for the chunk that produced its
// input (a pure synchronisation). send_bytes > 0: every pipeline hop between ranks moves that many
// bytes over InfiniBand, batched as DualPipe does (see synthetic_workload.cpp).
#pragma once

#include <memory>

#include "platforms/cluster_platform.hpp"
#include "vocabulary/plan.hpp"
#include "vocabulary/workload.hpp"

namespace stepsim {

std::unique_ptr<ops::Workload> make_synthetic_workload(const Plan& plan);
// Its platform: one GPU per pipeline rank, each on its own node.
PlatformSpec synthetic_platform(const Plan& plan);

}  // namespace stepsim
