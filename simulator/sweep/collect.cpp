#include "simulator/sweep/collect.hpp"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "simulator/config/config_error.hpp"
#include "simulator/plot/chart.hpp"
#include "simulator/sweep/sweep_plot.hpp"

namespace stepsim::sweep {
namespace {

std::string read_file(const std::string& path, bool& exists) {
  std::ifstream in(path);
  exists = bool(in);
  std::stringstream ss;
  if (in) ss << in.rdbuf();
  return ss.str();
}

std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace

PointOutcome read_point(const std::string& dir, const GridPoint& p, int points, const JobStatus* status) {
  PointOutcome o{p, {}, ""};
  const std::string json_path = point_json_path(dir, p.index, points);
  bool json_exists = false, err_exists = false;
  const std::string text = read_file(json_path, json_exists);
  const std::string err = last_line(read_file(point_err_path(dir, p.index, points), err_exists));
  if (status && !status->ok()) {
    if (!status->started) o.error = status->error;
    else if (!err.empty()) o.error = err;
    else if (status->signal) o.error = "killed by signal " + std::to_string(status->signal) + " (" + strsignal(status->signal) + ")";
    else o.error = "exit status " + std::to_string(status->exit_code);
    return o;
  }
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(text);
  } catch (const std::exception&) {
    report = nullptr;
  }
  if (report.is_object()) {
    o.fields = flatten_report(report);
    return o;
  }
  const std::string name = "points/" + point_name(p.index, points) + ".json";
  if (!err.empty()) o.error = err;
  else if (!json_exists) o.error = name + " missing: the point has not run";
  else o.error = name + " holds no JSON report";
  return o;
}

CollectSummary collect(const std::string& dir, const Manifest& m, const std::vector<JobStatus>& statuses) {
  const auto grid = cartesian_product(m.axes);
  const int n = int(grid.size());
  std::vector<PointOutcome> outcomes;
  CollectSummary sum;
  sum.points = n;
  for (const auto& p : grid) {
    outcomes.push_back(read_point(dir, p, n, statuses.empty() ? nullptr : &statuses[size_t(p.index)]));
    if (!outcomes.back().error.empty()) ++sum.failed;
  }
  const SweepTable table = build_table(m.axes, outcomes);
  const std::string csv_path = dir + "/sweep.csv";
  {
    std::ofstream out(csv_path);
    write_csv(table, out);
    if (!out) throw ConfigError(csv_path + ": cannot write the sweep table; check -o");
  }
  sum.csv = csv_path;
  const std::string x = m.plot_x.empty() ? m.axes.front().key : m.plot_x;
  const std::vector<std::string> ys = m.plot_y.empty() ? std::vector<std::string>{"step_time_s"} : m.plot_y;
  const std::string png_path = m.png.empty() ? dir + "/sweep.png" : m.png;
  const bool drawable = sum.failed < n && numeric_x(table, x);
  if (!drawable) {
    std::error_code ec;
    std::filesystem::remove(png_path, ec);  // no stale chart from an earlier run
    std::fprintf(stderr, "stepsim sweep: %s; %s not drawn\n",
                 sum.failed == n ? "no point succeeded" : (x + " is not numeric (choose another with --plot-x)").c_str(),
                 png_path.c_str());
    for (const auto& y : ys)  // a misspelt field is still bad input
      if (table.column(y) < 0 && sum.failed < n) throw ConfigError("--plot-y " + y + ": no such column in sweep.csv");
    return sum;
  }
  std::string title = m.title;
  if (title.empty()) {  // the config and the shared --set values, while they fit on one line
    title = std::filesystem::path(m.config).filename().string();
    for (const auto& s : m.sets) {
      if (title.size() + s.size() > 90) {
        title += " ...";
        break;
      }
      title += " " + s;
    }
  }
  plot::write_line_chart_png(sweep_chart(table, m.axes, x, ys, title), png_path);
  sum.plotted = true;
  sum.png = png_path;
  return sum;
}

}  // namespace stepsim::sweep
