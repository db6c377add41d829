// run_in_child: the result or the error comes back, and in sanitized builds a leak in the child's
// work is caught (children leave with _exit, which skips LeakSanitizer's check at exit).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "simulator/runs/child_run.hpp"

namespace stepsim {
namespace {

TEST(ChildRun, ResultAndErrorComeBack) {
  EXPECT_EQ(run_in_child([] { return std::string("result\0bytes", 12); }), std::string("result\0bytes", 12));
  EXPECT_EQ(run_in_child_value<double>([] { return 7.5; }), 7.5);
  try {
    (void)run_in_child([]() -> std::string { throw std::runtime_error("boom"); });
    ADD_FAILURE() << "the child's exception was lost";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "child simulation failed: boom");
  }
}

// Loses a hundred blocks (a hundred, so that a stale copy of one pointer on the stack cannot hide
// them all from the leak check).
__attribute__((noinline)) void leak_blocks() {
  for (int i = 0; i < 100; ++i) {
    int* volatile p = new int[64];
    p[0] = i;
    p = nullptr;
  }
}

TEST(ChildRun, LeakInTheChildIsCaughtInSanitizedBuilds) {
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_THROW((void)run_in_child([] {
                 leak_blocks();
                 return std::string("leaked");
               }),
               std::runtime_error);
#else
  // Unsanitized: nothing checks for leaks, the result comes back.
  EXPECT_EQ(run_in_child([] {
              leak_blocks();
              return std::string("leaked");
            }),
            "leaked");
#endif
}

}  // namespace
}  // namespace stepsim
