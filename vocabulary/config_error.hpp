// One bad input = one ConfigError whose message names the file or key and says what would fix it.
// The CLI prints it as a single line and exits with code 2.
#pragma once

#include <stdexcept>
#include <string>

namespace stepsim {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Exit code for any rejected input.
inline constexpr int kBadInputExit = 2;

}  // namespace stepsim
