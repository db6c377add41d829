#include "workloads/layers/local_batch.hpp"

namespace stepsim {

int64_t replica_sequences(const Plan& plan, int64_t replica) {
  const int64_t dp = plan.dp(), batch = plan.train.global_batch;
  const int64_t extra = batch % dp;
  // Bresenham spread: replica d gets one extra sequence when floor((d+1) e / dp) steps up, so
  // the extras are evenly interleaved (every other GPU for 15360 over 2048).
  const bool gets_extra = (replica + 1) * extra / dp - replica * extra / dp == 1;
  return batch / dp + (gets_extra ? 1 : 0);
}

int64_t microbatch_sequences(const Plan& plan, int64_t replica, int64_t mb) {
  const int64_t local = replica_sequences(plan, replica), m = plan.parallel.microbatches;
  return local / m + (mb < local % m ? 1 : 0);
}

}  // namespace stepsim
