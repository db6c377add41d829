// SimGrid runs one engine per process, so a second replay in the same command (an unperturbed
// baseline, a what-if bar of the waterfall) runs in a forked child that sends its result back.
#pragma once

#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace stepsim {

// Runs `work` in a forked child and returns the bytes it produced. An exception in the child comes
// back as std::runtime_error("child simulation failed: <its message>"); a crash as "... died".
std::string run_in_child(const std::function<std::string()>& work);

// The same for a plain value (a step time, a few sums).
template <class T>
T run_in_child_value(const std::function<T()>& work) {
  static_assert(std::is_trivially_copyable_v<T>);
  const std::string bytes = run_in_child([&] {
    const T v = work();
    return std::string(reinterpret_cast<const char*>(&v), sizeof v);
  });
  if (bytes.size() != sizeof(T)) throw std::runtime_error("child simulation sent a short result");
  T v;
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

}  // namespace stepsim
