#include "simulator/sweep/grid.hpp"

#include <set>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"

namespace stepsim::sweep {

std::vector<std::string> GridPoint::overrides() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : values) out.push_back(k + "=" + v);
  return out;
}

GridAxis parse_grid_axis(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--grid " + text + ": expected key=v1,v2,..., for example --grid parallel.microbatches=1,2,4,8");
  GridAxis axis{text.substr(0, eq), {}};
  // Split on commas at nesting depth 0 and outside quotes.
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (const char c : text.substr(eq + 1)) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      axis.values.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  axis.values.push_back(cur);
  for (const auto& v : axis.values)
    if (v.find_first_of("\n\r") != std::string::npos)
      throw ConfigError("--grid " + axis.key + ": a value holds a line break; a job list (--emit-jobs) would run it "
                        "as two commands, so write each value on one line");
  for (const auto& v : axis.values)
    if (v.find_first_not_of(" \t") == std::string::npos)
      throw ConfigError("--grid " + axis.key + ": empty value in \"" + text.substr(eq + 1) +
                        "\"; list values separated by single commas");
  return axis;
}

void check_grid(const std::vector<GridAxis>& axes) {
  if (axes.empty()) throw ConfigError("--grid: missing; give at least one, for example --grid parallel.microbatches=1,2,4,8");
  // Point numbers are ints and every point is a process: bound the product before forming it.
  double points = 1;
  for (const auto& axis : axes) points *= double(axis.values.size());
  if (points > double(kMaxPoints))
    throw ConfigError("--grid " + axes.back().key + ": the grid has " + std::to_string(uint64_t(points)) +
                      " points, more than the " + std::to_string(kMaxPoints) + " a sweep runs; split it into several sweeps");
  std::set<std::string> seen;
  for (const auto& axis : axes) {
    if (!seen.insert(axis.key).second)
      throw ConfigError("--grid " + axis.key + ": given twice; list all its values in one --grid");
    if (axis.values.empty())
      throw ConfigError("--grid " + axis.key + ": no values; list at least one, for example --grid " + axis.key + "=1,2");
    for (const auto& v : axis.values) {
      try {
        check_override(axis.key + "=" + v);
      } catch (const ConfigError& e) {
        // The loader words it for --set; the user typed --grid.
        std::string msg = e.what();
        if (msg.rfind("--set", 0) == 0) msg.replace(0, 5, "--grid");
        throw ConfigError(msg);
      }
    }
  }
}

std::vector<GridPoint> cartesian_product(const std::vector<GridAxis>& axes) {
  size_t total = 1;
  for (const auto& a : axes) total *= a.values.size();
  std::vector<GridPoint> points;
  if (axes.empty()) return points;
  points.reserve(total);
  for (size_t i = 0; i < total; ++i) {
    GridPoint p;
    p.index = int(i);
    // Mixed-radix digits of i, last axis fastest.
    size_t rest = i;
    std::vector<size_t> digit(axes.size());
    for (size_t a = axes.size(); a-- > 0;) {
      digit[a] = rest % axes[a].values.size();
      rest /= axes[a].values.size();
    }
    for (size_t a = 0; a < axes.size(); ++a) p.values.emplace_back(axes[a].key, axes[a].values[digit[a]]);
    points.push_back(std::move(p));
  }
  return points;
}

std::string point_name(int index, int points) {
  size_t width = 3;
  for (int n = points - 1; n >= 1000; n /= 10) ++width;
  std::string s = std::to_string(index);
  return std::string(s.size() < width ? width - s.size() : 0, '0') + s;
}

}  // namespace stepsim::sweep
