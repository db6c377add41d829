#include "simulator/sweep/sweep_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>

#include "vocabulary/config_error.hpp"

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

std::string unit_of(const std::string& field) {
  if (field.find("share") != std::string::npos) return "%";
  for (const char* u : {"_s", "_bytes", "_flops", "_GBps"}) {
    const std::string suffix = u;
    if (field.size() > suffix.size() && field.compare(field.size() - suffix.size(), suffix.size(), suffix) == 0)
      return suffix.substr(1);
  }
  return "";  // a ratio or a count
}

void check_plot_units(const std::vector<std::string>& y_fields) {
  std::vector<std::string> units;
  for (const auto& y : y_fields)
    if (std::find(units.begin(), units.end(), unit_of(y)) == units.end()) units.push_back(unit_of(y));
  if (units.size() > 2) {
    std::string list;
    for (const auto& u : units) list += (list.empty() ? "" : ", ") + (u.empty() ? std::string("no unit") : u);
    throw ConfigError("--plot-y: the fields have " + std::to_string(units.size()) + " different units (" + list +
                      "); a chart has two y axes, so plot the others in another chart (--collect --plot-y)");
  }
}

namespace {

std::string cell(const SweepTable& t, size_t row, const std::string& column) {
  const int c = t.column(column);
  return c < 0 ? "" : t.rows[row][size_t(c)];
}

}  // namespace

bool out_of_memory(const SweepTable& table, size_t row) {
  const int c = table.column("memory.fits");
  return c >= 0 && table.rows[row][size_t(c)] == "false";
}

int fastest_fitting_row(const SweepTable& table) {
  const int ec = table.column("error"), sc = table.column("step_time_s");
  if (sc < 0) return -1;
  int best = -1;
  double best_s = 0;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    double v;
    if ((ec >= 0 && !table.rows[r][size_t(ec)].empty()) || out_of_memory(table, r) ||
        !parse_number(table.rows[r][size_t(sc)], v))
      continue;
    if (best < 0 || v < best_s) best = int(r), best_s = v;
  }
  return best;
}

std::string default_title(const SweepTable& table, const std::vector<GridAxis>& axes,
                          const std::vector<std::string>& sets) {
  const int ec = table.column("error");
  std::vector<size_t> ok;
  for (size_t r = 0; r < table.rows.size(); ++r)
    if (ec < 0 || table.rows[r][size_t(ec)].empty()) ok.push_back(r);
  // A plan field enters the title only when every successful point has the same value.
  const auto shared = [&](const std::string& column) -> std::string {
    if (ok.empty()) return "";
    const std::string v = cell(table, ok.front(), column);
    for (const size_t r : ok)
      if (cell(table, r, column) != v) return "";
    return v;
  };
  std::vector<std::string> parts;
  const std::string model = shared("roofline.plan.model");
  if (!model.empty()) parts.push_back(model);
  for (const auto& [column, before, after] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"roofline.plan.gpus", "", " GPUs"},
                                                                      {"roofline.plan.pp", "PP ", ""},
                                                                      {"roofline.plan.ep", "EP ", ""},
                                                                      {"roofline.plan.schedule", "", ""}}) {
    const std::string v = shared(column);
    if (!v.empty()) parts.push_back(before + v + after);
  }
  if (parts.empty()) {
    const std::string workload = shared("sim.workload");
    if (!workload.empty()) parts.push_back(workload);
  }
  std::string by;
  for (const auto& a : axes) by += (by.empty() ? "by " : " and ") + a.key;
  if (!by.empty()) parts.push_back(by);
  std::string title;
  for (const auto& p : parts) title += (title.empty() ? "" : ", ") + p;
  for (const auto& s : sets) {  // while they fit on one line
    if (title.size() + s.size() > 100) {
      title += " ...";
      break;
    }
    title += (title.empty() ? "" : "; ") + s;
  }
  return title;
}

plot::LineChart sweep_chart(const SweepTable& table, const std::vector<GridAxis>& axes, const std::string& x_key,
                            const std::vector<std::string>& y_fields, const std::string& title) {
  const int xc = table.column(x_key);
  const GridAxis* x_axis = nullptr;
  for (const auto& a : axes)
    if (a.key == x_key) x_axis = &a;
  if (xc < 0 || x_axis == nullptr)
    throw ConfigError("--plot-x " + x_key + ": not a grid key of this sweep; use one of the --grid keys");
  const int ec = table.column("error");
  // Up to two units: the first field's on the left axis, another unit on the right.
  check_plot_units(y_fields);
  std::vector<std::string> units;
  for (const auto& y : y_fields) {
    if (table.column(y) < 0)
      throw ConfigError("--plot-y " + y + ": no such column in sweep.csv; use a report field such as step_time_s or exposed_comm_share");
    if (std::find(units.begin(), units.end(), unit_of(y)) == units.end()) units.push_back(unit_of(y));
  }
  const bool categories = !numeric_x(table, x_key);

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
  if (categories) chart.x_categories = x_axis->values;
  const auto axis_label = [&](const std::string& unit) {
    std::string names;
    for (const auto& y : y_fields)
      if (unit_of(y) == unit) names += (names.empty() ? "" : ", ") + y;
    return names + (unit.empty() ? "" : " (" + unit + ")");
  };
  chart.y_label = axis_label(units.front());
  if (units.size() > 1) chart.y2_label = axis_label(units[1]);
  std::vector<double> all_x;
  int colour = 0;
  for (const auto& g : groups) {
    for (const auto& y : y_fields) {
      const std::string suffix = g.empty() ? "" : " [" + g + "]";
      const int yc = table.column(y);
      const int rc = table.column("roofline." + y);
      const bool right = unit_of(y) != units.front();
      const double scale = unit_of(y) == "%" ? 100.0 : 1.0;
      plot::Series sim{y + " (simulation)" + suffix, {}, {}, false, colour, right, {}};
      plot::Series roof{y + " (roofline)" + suffix, {}, {}, true, colour, right, {}};
      ++colour;  // the pair shares one colour
      std::vector<std::pair<double, size_t>> order;
      for (const size_t r : rows_of[g]) {
        double x = 0;
        if (categories) {
          const auto it = std::find(x_axis->values.begin(), x_axis->values.end(), table.rows[r][size_t(xc)]);
          x = double(it - x_axis->values.begin());
        } else if (!parse_number(table.rows[r][size_t(xc)], x)) {
          throw ConfigError("--plot-x " + x_key + ": value \"" + table.rows[r][size_t(xc)] + "\" is not a number");
        }
        order.emplace_back(x, r);
      }
      std::stable_sort(order.begin(), order.end());
      for (const auto& [x, r] : order) {
        double v;
        const bool oom = out_of_memory(table, r);
        if (parse_number(table.rows[r][size_t(yc)], v)) {
          sim.x.push_back(x);
          sim.y.push_back(scale * v);
          sim.out_of_memory.push_back(oom);
        }
        if (rc >= 0 && parse_number(table.rows[r][size_t(rc)], v)) {
          roof.x.push_back(x);
          roof.y.push_back(scale * v);
          roof.out_of_memory.push_back(oom);
        }
        all_x.push_back(x);
      }
      if (!sim.x.empty()) chart.series.push_back(std::move(sim));
      if (!roof.x.empty()) chart.series.push_back(std::move(roof));
    }
  }
  if (!all_x.empty() && !categories) {
    const auto [lo, hi] = std::minmax_element(all_x.begin(), all_x.end());
    chart.log2_x = *lo > 0 && *hi >= 8 * *lo;
  }
  return chart;
}

}  // namespace stepsim::sweep
