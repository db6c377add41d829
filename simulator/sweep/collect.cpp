#include "simulator/sweep/collect.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "vocabulary/config_error.hpp"
#include "simulator/io/input_file.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/io/output_file.hpp"
#include "simulator/plot/chart.hpp"
#include "simulator/sweep/sweep_plot.hpp"

namespace stepsim::sweep {
namespace {

// A point's report or stderr; missing is normal (the point has not run), anything else must be a
// regular file of sane size.
std::string read_file(const std::string& path, bool& exists) {
  std::error_code ec;
  exists = std::filesystem::exists(std::filesystem::symlink_status(path, ec));
  return exists ? io::read_input_file(path, "sweep point", 256 * io::kMiB) : std::string();
}

std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

std::string joined_sets(const std::vector<std::string>& sets) {
  if (sets.empty()) return "no --set";
  std::string s;
  for (const auto& x : sets) s += (s.empty() ? "--set " : " --set ") + x;
  return io::shortened(s, 160);
}

// Empty when the report ran with the manifest's config and this point's --set values.
std::string settings_mismatch(const nlohmann::json& report, const Manifest& m, const GridPoint& p,
                              const std::string& name) {
  std::vector<std::string> expected = m.sets;
  for (const auto& o : p.overrides()) expected.push_back(o);
  const auto text_list = [](const nlohmann::json& v) {
    return v.is_array() && std::all_of(v.begin(), v.end(), [](const nlohmann::json& e) { return e.is_string(); });
  };
  if (!report.contains("config") || !report["config"].is_string() || !report.contains("sets") ||
      !text_list(report["sets"]))
    return name + " does not record the config and --set values it ran with (written by an older stepsim?); "
                  "rerun the point";
  if (report["config"].get<std::string>() != m.config)
    return name + " ran on " + io::shortened(report["config"].get<std::string>(), 120) + ", not this sweep's " +
           io::shortened(m.config, 120) + ": a point of another sweep; rerun the point";
  const auto ran = report["sets"].get<std::vector<std::string>>();
  if (ran != expected)
    return name + " ran with " + joined_sets(ran) + ", not this point's " + joined_sets(expected) +
           ": a point of another sweep; rerun the point";
  return "";
}

}  // namespace

PointOutcome read_point(const std::string& dir, const Manifest& m, const GridPoint& p, int points,
                        const JobStatus* status) {
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
  // A simulate report: an object with the step time and the roofline beside it.
  const bool is_report = report.is_object() && report.contains("step_time_s") && report["step_time_s"].is_number() &&
                         report.contains("roofline");
  const std::string name = "points/" + point_name(p.index, points) + ".json";
  if (is_report) {
    o.error = settings_mismatch(report, m, p, name);
    if (o.error.empty()) o.fields = flatten_report(report);
    return o;
  }
  if (!err.empty()) o.error = err;
  else if (!json_exists) o.error = name + " missing: the point has not run";
  else if (report.is_object()) o.error = name + " is not a stepsim simulate report (no step_time_s); rerun the point";
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
    outcomes.push_back(read_point(dir, m, p, n, statuses.empty() ? nullptr : &statuses[size_t(p.index)]));
    if (!outcomes.back().error.empty()) ++sum.failed;
  }
  const SweepTable table = build_table(m.axes, outcomes);
  for (size_t r = 0; r < table.rows.size(); ++r) sum.out_of_memory += out_of_memory(table, r) ? 1 : 0;
  if (const int best = fastest_fitting_row(table); best >= 0) {
    for (size_t a = 0; a < m.axes.size(); ++a)
      sum.fastest += (sum.fastest.empty() ? "" : ", ") + m.axes[a].key + "=" + table.rows[size_t(best)][a];
    char step[32];
    std::snprintf(step, sizeof step, " (%.3f s)", std::strtod(table.rows[size_t(best)][size_t(table.column("step_time_s"))].c_str(), nullptr));
    sum.fastest += step;
  }
  const std::string csv_path = dir + "/sweep.csv";
  {
    io::OutputFile out(csv_path, "-o", io::kDashIsStdout);  // inside -o DIR: never -
    write_csv(table, out.stream());
    out.commit();
  }
  sum.csv = csv_path;
  const std::string x = m.plot_x.empty() ? m.axes.front().key : m.plot_x;
  const std::vector<std::string> ys = m.plot_y.empty() ? std::vector<std::string>{"step_time_s"} : m.plot_y;
  const std::string png_path = m.png.empty() ? dir + "/sweep.png" : m.png;
  if (sum.failed == n) {
    std::error_code ec;
    std::filesystem::remove(png_path, ec);  // no stale chart from an earlier run
    std::fprintf(stderr, "stepsim sweep: no point succeeded; %s not drawn\n", png_path.c_str());
    return sum;
  }
  // A field of the report that none of these plans writes (a roofline field of the synthetic
  // workload, a routing field of a dense model) is left out of the chart with a note; the chart
  // fails only when no field is left.
  std::vector<std::string> drawn;
  for (const auto& y : ys) {
    if (table.column(y) >= 0) drawn.push_back(y);
    else std::fprintf(stderr, "stepsim sweep: note: --plot-y %s: no point's report has this field; not drawn\n", y.c_str());
  }
  const std::string title = m.title.empty() ? default_title(table, m.axes, m.sets) : m.title;
  plot::write_line_chart_png(sweep_chart(table, m.axes, x, drawn.empty() ? ys : drawn, title), png_path);
  sum.plotted = true;
  sum.png = png_path;
  return sum;
}

}  // namespace stepsim::sweep
