#include "simulator/sweep/sweep_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "simulator/config/config_error.hpp"

namespace stepsim::sweep {
namespace {

bool parse_number(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end && *end == '\0' && std::isfinite(out);
}

}  // namespace

bool numeric_x(const SweepTable& table, const std::string& x_key) {
  const int xc = table.column(x_key), ec = table.column("error");
  if (xc < 0 || ec < 0) return false;
  double x;
  for (const auto& row : table.rows)
    if (row[size_t(ec)].empty() && !parse_number(row[size_t(xc)], x)) return false;
  return true;
}

plot::LineChart sweep_chart(const SweepTable& table, const std::vector<GridAxis>& axes, const std::string& x_key,
                            const std::vector<std::string>& y_fields, const std::string& title) {
  const int xc = table.column(x_key);
  bool x_is_grid = false;
  for (const auto& a : axes) x_is_grid |= a.key == x_key;
  if (xc < 0 || !x_is_grid) throw ConfigError("--plot-x " + x_key + ": not a grid key of this sweep; use one of the --grid keys");
  const int ec = table.column("error");
  bool percent = true;
  for (const auto& y : y_fields) {
    if (table.column(y) < 0)
      throw ConfigError("--plot-y " + y + ": no such column in sweep.csv; use a report field such as step_time_s or exposed_comm_share");
    percent &= y.find("share") != std::string::npos;
  }

  // Lines are keyed by the values of the other grid keys, in first-seen (grid) order.
  std::vector<std::string> groups;
  std::map<std::string, std::vector<size_t>> rows_of;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    if (!row[size_t(ec)].empty()) continue;  // failed point
    std::string g;
    for (size_t a = 0; a < axes.size(); ++a)
      if (axes[a].key != x_key) g += (g.empty() ? "" : ", ") + axes[a].key + "=" + row[a];
    if (!rows_of.count(g)) groups.push_back(g);
    rows_of[g].push_back(r);
  }

  plot::LineChart chart;
  chart.title = title;
  chart.x_label = x_key;
  std::string names;
  for (const auto& y : y_fields) names += (names.empty() ? "" : ", ") + y;
  chart.y_label = names + (percent ? " (%)" : "");
  const double scale = percent ? 100.0 : 1.0;
  std::vector<double> all_x;
  for (const auto& g : groups) {
    for (const auto& y : y_fields) {
      const std::string suffix = g.empty() ? "" : " [" + g + "]";
      const int yc = table.column(y);
      const int rc = table.column("roofline." + y);
      plot::Series sim{y + " (simulation)" + suffix, {}, {}, false};
      plot::Series roof{y + " (roofline)" + suffix, {}, {}, true};
      std::vector<std::pair<double, size_t>> order;
      for (const size_t r : rows_of[g]) {
        double x;
        if (!parse_number(table.rows[r][size_t(xc)], x))
          throw ConfigError("--plot-x " + x_key + ": value \"" + table.rows[r][size_t(xc)] +
                            "\" is not a number; plot against a numeric grid key");
        order.emplace_back(x, r);
      }
      std::stable_sort(order.begin(), order.end());
      for (const auto& [x, r] : order) {
        double v;
        if (parse_number(table.rows[r][size_t(yc)], v)) {
          sim.x.push_back(x);
          sim.y.push_back(scale * v);
        }
        if (rc >= 0 && parse_number(table.rows[r][size_t(rc)], v)) {
          roof.x.push_back(x);
          roof.y.push_back(scale * v);
        }
        all_x.push_back(x);
      }
      if (!sim.x.empty()) chart.series.push_back(std::move(sim));
      if (!roof.x.empty()) chart.series.push_back(std::move(roof));
    }
  }
  if (!all_x.empty()) {
    const auto [lo, hi] = std::minmax_element(all_x.begin(), all_x.end());
    chart.log2_x = *lo > 0 && *hi >= 8 * *lo;
  }
  return chart;
}

}  // namespace stepsim::sweep
