#include "vocabulary/seeded_random.hpp"

#include <cmath>
#include <numbers>

namespace stepsim {

namespace {

// SplitMix64 finaliser: spreads (seed, stream) over the generator's seed space.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

SeededRandom::SeededRandom(uint64_t seed, uint64_t stream) : rng_(mix(seed ^ mix(stream))) {}

double SeededRandom::unit() { return double(rng_() >> 11) * 0x1.0p-53; }

double SeededRandom::open_unit() { return (double(rng_() >> 12) + 0.5) * 0x1.0p-52; }

double SeededRandom::normal() {
  const double r = std::sqrt(-2.0 * std::log(open_unit()));
  return r * std::cos(2.0 * std::numbers::pi * unit());
}

double SeededRandom::gamma(double alpha) {
  // alpha < 1: Gamma(alpha) = Gamma(alpha + 1) * U^(1 / alpha).
  if (alpha < 1.0) return gamma(alpha + 1.0) * std::pow(open_unit(), 1.0 / alpha);
  const double d = alpha - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = normal();
    const double v = std::pow(1.0 + c * x, 3);
    if (v <= 0) continue;
    if (std::log(open_unit()) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

}  // namespace stepsim
