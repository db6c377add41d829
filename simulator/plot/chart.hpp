// PNG charts for reports (sweeps, the roofline-to-reality waterfall), drawn with Cairo so a user
// needs no Python or gnuplot. Axes, ticks, legend and labels are laid out here once; callers only
// describe the data.
#pragma once

#include <string>
#include <vector>

namespace stepsim::plot {

struct Series {
  std::string label;
  std::vector<double> x, y;
  bool dashed = false;      // e.g. the roofline beside the simulation
  int colour = -1;          // palette index; -1 = the series' position (a pair shares one index)
  bool right_axis = false;  // plotted against the right-hand y axis (a second unit)
  // Per point (empty: none): the plan does not fit in GPU memory. Drawn as a hollow marker, and on
  // a solid series labelled "OOM"; the legend then explains the mark.
  std::vector<bool> out_of_memory;
};

struct LineChart {
  std::string title, x_label, y_label;
  std::string y2_label;  // the right-hand axis, when some series use it
  std::vector<Series> series;
  bool log2_x = false;  // microbatch counts 1, 2, 4, 8 read best on a log2 axis
  bool y_from_zero = true;
  // Non-empty: x is a category (e.g. a schedule); series x values are indices into this list.
  std::vector<std::string> x_categories;
};

// Throws stepsim::ConfigError naming `path` when the file cannot be written.
void write_line_chart_png(const LineChart& chart, const std::string& path);

// A scatter of points (a search's plans: step time against peak memory), each series its marks
// and, optionally, a line through its points in order (a Pareto front).
struct ScatterSeries {
  std::string label;
  std::vector<double> x, y;
  int colour = -1;      // palette index; -1 = grey (background points)
  bool hollow = false;  // a ring instead of a dot
  bool line = false;    // join the points in the order given
  double radius = 4;
};

struct ScatterChart {
  std::string title, x_label, y_label;
  std::vector<ScatterSeries> series;  // drawn in order: later series on top
  double x_marker = -1;               // a vertical reference line (e.g. the GPU's memory); < 0 = none
  std::string x_marker_label;
};

// Throws stepsim::ConfigError naming `path` when the file cannot be written.
void write_scatter_png(const ScatterChart& chart, const std::string& path);

// One bar of a waterfall: a total drawn from zero, or a step from the previous bar's top to
// `value` (up or down), or what is left unexplained (hatched grey, also from the previous top).
struct WaterfallBar {
  enum class Kind { Total, Step, Unexplained };
  std::string label;
  double value = 0;  // the running total after this bar (seconds)
  Kind kind = Kind::Step;
};

struct WaterfallChart {
  std::string title, y_label;
  std::vector<WaterfallBar> bars;
  double reference = -1;          // a horizontal reference line (e.g. the reported step); < 0 = none
  std::string reference_label;
};

void write_waterfall_png(const WaterfallChart& chart, const std::string& path);

}  // namespace stepsim::plot
