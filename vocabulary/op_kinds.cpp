#include "vocabulary/op_kinds.hpp"

namespace stepsim::ops {

const char* to_string(Phase p) {
  switch (p) {
    case Phase::None: return "";
    case Phase::Forward: return "fwd";
    case Phase::Backward: return "bwd";
    case Phase::Weight: return "wgrad";
  }
  return "?";
}

}  // namespace stepsim::ops
