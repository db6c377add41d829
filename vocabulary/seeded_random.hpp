// Random draws that are identical on every platform and library version for a given seed:
// std::mt19937_64 (its output is fixed by the standard) feeding our own distributions, since the
// std:: distributions may change from one standard library to the next.
#pragma once

#include <cstdint>
#include <random>

namespace stepsim {

class SeededRandom {
 public:
  // `stream` separates independent uses of one seed (expert ranking, noise, ...), so adding draws
  // to one use never shifts another's.
  SeededRandom(uint64_t seed, uint64_t stream);

  double unit();       // uniform in [0, 1), 53 random bits
  double open_unit();  // uniform in (0, 1)
  double normal();     // standard normal (Box-Muller, no cached second value)
  double gamma(double alpha);  // Gamma(alpha, 1), Marsaglia-Tsang; alpha > 0

 private:
  std::mt19937_64 rng_;
};

}  // namespace stepsim
