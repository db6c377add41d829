// A sweep's grid: `--grid key=v1,v2,...` axes and their cartesian product, in a fixed order
// (the first axis varies slowest) so point numbers mean the same thing on every run.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace stepsim::sweep {

struct GridAxis {
  std::string key;                  // a dotted config key, e.g. parallel.microbatches
  std::vector<std::string> values;  // YAML texts, as --set would take them
  bool operator==(const GridAxis&) const = default;
};

struct GridPoint {
  int index = 0;
  std::vector<std::pair<std::string, std::string>> values;  // (key, value) in axis order

  std::vector<std::string> overrides() const;  // "key=value" for --set
};

// Parses "key=v1,v2,..."; commas inside [], {} or quotes belong to the value
// (e.g. scenario.stragglers=[{gpu: 5, clock: 0.8}],[]). Throws ConfigError naming --grid.
GridAxis parse_grid_axis(const std::string& text);

// The most points one sweep may have (each is a process and a file).
inline constexpr int kMaxPoints = 100000;

// Throws ConfigError when the grid has more than kMaxPoints points, a key repeats or is not a config key, or a value has the wrong type.
void check_grid(const std::vector<GridAxis>& axes);

std::vector<GridPoint> cartesian_product(const std::vector<GridAxis>& axes);

// "007": zero-padded to at least 3 digits and to the width of the largest index.
std::string point_name(int index, int points);

}  // namespace stepsim::sweep
