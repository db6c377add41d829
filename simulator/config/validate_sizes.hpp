// Size limits a plan must respect before any stage computes with it: the model's parameter and
// byte counts must fit int64 (every product of model dimensions is formed in int64 downstream),
// and the replay must fit in memory and finish in hours, not weeks. Each limit is one error line
// that names the key, the limit and why.
#pragma once

#include "vocabulary/plan.hpp"

namespace stepsim {

// Most SimGrid activities a replay may need: a full 16,384-GPU DeepSeek-V3 step (121 M activities,
// 8x the 2048-GPU step's 15 M, which takes about 1 GiB and 2-3 minutes on a CI core) with some
// room; more runs for hours.
inline constexpr double kMaxReplayActivities = 1.5e8;

// Throws ConfigError (naming plan.source) when a size is out of reach. Call after the per-key
// bounds and the structural checks (divisibility) of validate_plan.
void validate_sizes(const Plan& plan);

// Throws ConfigError when the replay would exceed kMaxReplayActivities (simulate, compare,
// calibrate call it; the roofline of any plan is closed forms and always cheap).
void check_replay_size(const Plan& plan);

// The replay's activities, estimated from the plan (simulated GPUs x microbatches x layers per
// GPU x ops per layer).
double estimated_replay_activities(const Plan& plan);

}  // namespace stepsim
