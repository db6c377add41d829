#include "simulator/plot/chart.hpp"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "vocabulary/config_error.hpp"
#include "simulator/io/output_file.hpp"
#include "simulator/plot/canvas.hpp"

namespace stepsim::plot {
namespace {

constexpr int kWidth = 960, kHeight = 600;
constexpr double kLeft = 90, kRight = 30, kTop = 60, kBottom = 110;

// A chart's canvas: kWidth wide; `height` above kHeight leaves room below the plot for a long legend.
Canvas chart_canvas(int height = kHeight) { return Canvas(kWidth, height); }

// "Nice" tick step (1, 2 or 5 times a power of ten) giving about `target` ticks over `span`.
double nice_step(double span, int target) {
  if (span <= 0) return 1;
  const double raw = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

std::string format_tick(double v, double step) {
  char buf[32];
  const int decimals = step >= 1 ? 0 : int(std::ceil(-std::log10(step)));
  std::snprintf(buf, sizeof buf, "%.*f", std::min(decimals, 6), v);
  return buf;
}

struct Axis {
  double lo = 0, hi = 1;
  double step = 1;
};

Axis nice_axis(double lo, double hi, bool from_zero) {
  if (from_zero) lo = std::min(lo, 0.0);
  if (hi <= lo) hi = lo + 1;
  Axis a;
  a.step = nice_step(hi - lo, 6);
  a.lo = std::floor(lo / a.step) * a.step;
  a.hi = std::ceil(hi / a.step) * a.step;
  return a;
}

// Frame, horizontal grid and y ticks; returns the y-to-pixel map's parameters through the axis.
void draw_frame(Canvas& c, const std::string& title, const std::string& y_label, const Axis& y,
                double right = kRight) {
  cairo_t* cr = c.cr.get();
  const double x0 = kLeft, x1 = kWidth - right, y0 = kHeight - kBottom, y1 = kTop;
  c.colour({0, 0, 0});
  // A long title (many --set values) shrinks to fit the width, then is cut.
  double size = 18;
  while (size > 12 && c.text_width(title, size) > kWidth - 24) size -= 1;
  std::string shown = title;
  bool cut = false;
  while (!shown.empty() && c.text_width(shown + (cut ? "..." : ""), size) > kWidth - 24) {
    size_t n = shown.size() - 1;  // drop the last whole UTF-8 character
    while (n > 0 && (static_cast<unsigned char>(shown[n]) & 0xC0) == 0x80) --n;
    shown.resize(n);
    cut = true;
  }
  c.text(cut ? shown + "..." : shown, kWidth / 2.0, 32, size, 0.5);
  c.text(y_label, 24, (y0 + y1) / 2, 13, 0.5, -M_PI / 2);
  for (double v = y.lo; v <= y.hi + y.step * 1e-9; v += y.step) {
    const double py = y0 - (v - y.lo) / (y.hi - y.lo) * (y0 - y1);
    c.colour({0.88, 0.88, 0.88});
    c.line(x0, py, x1, py, 1);
    c.colour({0.2, 0.2, 0.2});
    c.text(format_tick(v, y.step), x0 - 8, py + 4, 11, 1);
  }
  c.colour({0, 0, 0});
  cairo_set_line_width(cr, 1.2);
  cairo_rectangle(cr, x0, y1, x1 - x0, y0 - y1);
  cairo_stroke(cr);
}

// Legend entries laid out left to right by text width, wrapping; returns each entry's position.
std::vector<std::pair<double, double>> legend_layout(cairo_t* cr, const std::vector<std::string>& labels, double right) {
  std::vector<std::pair<double, double>> at;
  double x = kLeft, y = kHeight - 40;
  cairo_set_font_size(cr, 12);
  for (const std::string& label : labels) {
    cairo_text_extents_t ext;
    cairo_text_extents(cr, label.c_str(), &ext);
    const double entry = 38 + ext.x_advance + 24;
    if (x + entry > kWidth - right && x > kLeft) x = kLeft, y += 18;
    at.emplace_back(x, y);
    x += entry;
  }
  return at;
}

Axis y_axis_of(const std::vector<Series>& series, bool right, bool from_zero) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  bool labelled = false;  // an "OOM" label sits above its point: leave it room under the frame
  for (const Series& s : series)
    if (s.right_axis == right) {
      for (const double v : s.y) lo = std::min(lo, v), hi = std::max(hi, v);
      labelled = labelled || std::find(s.out_of_memory.begin(), s.out_of_memory.end(), true) != s.out_of_memory.end();
    }
  if (!(lo <= hi)) lo = 0, hi = 1;
  if (labelled) hi += 0.06 * (hi - std::min(lo, from_zero ? 0.0 : lo));
  return nice_axis(lo, hi, from_zero);
}

constexpr const char* kOomLegend = "OOM, hollow: the plan does not fit in GPU memory (hardware.memory_GiB)";

bool point_oom(const Series& s, size_t i) { return i < s.out_of_memory.size() && s.out_of_memory[i]; }

}  // namespace

void write_line_chart_png(const LineChart& chart, const std::string& path) {
  const bool categories = !chart.x_categories.empty();
  const bool two_axes = std::any_of(chart.series.begin(), chart.series.end(), [](const Series& s) { return s.right_axis; });
  const double right = two_axes ? 90 : kRight;
  // The legend: one entry per series, and one for the OOM mark when a point has it.
  std::vector<std::string> labels;
  bool any_oom = false;
  for (const Series& s : chart.series) {
    labels.push_back(s.label);
    any_oom = any_oom || std::find(s.out_of_memory.begin(), s.out_of_memory.end(), true) != s.out_of_memory.end();
  }
  if (any_oom) labels.push_back(kOomLegend);
  // Measure the legend first: the image grows downwards until every entry fits.
  double legend_bottom = 0;
  {
    Canvas probe = chart_canvas(1);
    for (const auto& [x, y] : legend_layout(probe.cr.get(), labels, right)) legend_bottom = std::max(legend_bottom, y);
  }
  Canvas c = chart_canvas(std::max(kHeight, int(std::ceil(legend_bottom)) + 12));
  cairo_t* cr = c.cr.get();
  const auto tx = [&](double x) { return chart.log2_x && !categories ? std::log2(std::max(x, 1e-300)) : x; };

  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo;
  std::vector<double> xs;
  for (const Series& s : chart.series) {
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      xlo = std::min(xlo, tx(s.x[i]));
      xhi = std::max(xhi, tx(s.x[i]));
      xs.push_back(s.x[i]);
    }
  }
  if (categories) xlo = 0, xhi = double(chart.x_categories.size() - 1);
  if (xs.empty() && !categories) xlo = 0, xhi = 1;
  if (xhi <= xlo) xlo -= 0.5, xhi += 0.5;
  const Axis y = y_axis_of(chart.series, false, chart.y_from_zero);
  const Axis y2 = y_axis_of(chart.series, true, chart.y_from_zero);
  draw_frame(c, chart.title, chart.y_label, y, right);

  const double px0 = kLeft + 20, px1 = kWidth - right - 20, py0 = kHeight - kBottom, py1 = kTop;
  const auto px = [&](double x) { return px0 + (tx(x) - xlo) / (xhi - xlo) * (px1 - px0); };
  const auto py_of = [&](const Axis& a) {
    return [&a, py0, py1](double v) { return py0 - (v - a.lo) / (a.hi - a.lo) * (py0 - py1); };
  };
  if (two_axes) {  // the right-hand axis: its own ticks and label
    const auto py2 = py_of(y2);
    c.colour({0.2, 0.2, 0.2});
    for (double v = y2.lo; v <= y2.hi + y2.step * 1e-9; v += y2.step) {
      c.line(kWidth - right, py2(v), kWidth - right + 5, py2(v), 1);
      c.text(format_tick(v, y2.step), kWidth - right + 8, py2(v) + 4, 11, 0);
    }
    c.text(chart.y2_label, kWidth - 20, (py0 + py1) / 2, 13, 0.5, M_PI / 2);
  }

  // x ticks at the data's own x values (sweeps are few, named points), or the category names.
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  if (categories) {
    xs.clear();
    for (size_t i = 0; i < chart.x_categories.size(); ++i) xs.push_back(double(i));
  }
  c.colour({0.2, 0.2, 0.2});
  for (const double x : xs) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    const std::string label = categories ? chart.x_categories[size_t(x)] : std::string(buf);
    c.line(px(x), py0, px(x), py0 + 5, 1);
    c.text(label, px(x), py0 + 20, 11, 0.5);
  }
  c.text(chart.x_label, (px0 + px1) / 2, py0 + 45, 13, 0.5);

  const auto legend = legend_layout(cr, labels, right);
  for (size_t k = 0; k < chart.series.size(); ++k) {
    const Series& s = chart.series[k];
    const auto py = py_of(s.right_axis ? y2 : y);
    const Rgb col = kPalette[size_t(s.colour >= 0 ? s.colour : int(k)) % std::size(kPalette)];
    c.colour(col);
    cairo_set_line_width(cr, 2.5);
    const double dash[] = {8, 5};
    cairo_set_dash(cr, dash, s.dashed ? 2 : 0, 0);
    const size_t n = std::min(s.x.size(), s.y.size());
    for (size_t i = 0; i < n; ++i) {
      if (i == 0) cairo_move_to(cr, px(s.x[i]), py(s.y[i]));
      else cairo_line_to(cr, px(s.x[i]), py(s.y[i]));
    }
    cairo_stroke(cr);
    cairo_set_dash(cr, nullptr, 0, 0);
    for (size_t i = 0; i < n; ++i) {
      if (point_oom(s, i)) {  // hollow: white inside, the series' colour around
        cairo_new_path(cr);  // text moved the current point: no line from it
        cairo_arc(cr, px(s.x[i]), py(s.y[i]), 5, 0, 2 * M_PI);
        c.colour({1, 1, 1});
        cairo_fill_preserve(cr);
        c.colour(col);
        cairo_set_line_width(cr, 2);
        cairo_stroke(cr);
        if (!s.dashed) c.text("OOM", px(s.x[i]), py(s.y[i]) - 10, 11, 0.5);
      } else {
        cairo_new_path(cr);
        cairo_arc(cr, px(s.x[i]), py(s.y[i]), 4, 0, 2 * M_PI);
        cairo_fill(cr);
      }
    }
    const auto [lx, ly] = legend[k];
    c.colour(col);
    cairo_set_dash(cr, dash, s.dashed ? 2 : 0, 0);
    c.line(lx, ly - 4, lx + 30, ly - 4, 2.5);
    cairo_set_dash(cr, nullptr, 0, 0);
    c.colour({0, 0, 0});
    c.text(s.label, lx + 38, ly, 12);
  }
  if (any_oom) {
    const auto [lx, ly] = legend.back();
    c.colour({0.3, 0.3, 0.3});
    cairo_new_path(cr);
    cairo_arc(cr, lx + 15, ly - 4, 5, 0, 2 * M_PI);
    cairo_set_line_width(cr, 2);
    cairo_stroke(cr);
    c.colour({0, 0, 0});
    c.text(kOomLegend, lx + 38, ly, 12);
  }
  c.write(path);
}

void write_scatter_png(const ScatterChart& chart, const std::string& path) {
  std::vector<std::string> labels;
  for (const ScatterSeries& s : chart.series) labels.push_back(s.label);
  double legend_bottom = 0;
  {
    Canvas probe = chart_canvas(1);
    for (const auto& [x, y] : legend_layout(probe.cr.get(), labels, kRight)) legend_bottom = std::max(legend_bottom, y);
  }
  Canvas c = chart_canvas(std::max(kHeight, int(std::ceil(legend_bottom)) + 12));
  cairo_t* cr = c.cr.get();
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  for (const ScatterSeries& s : chart.series)
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      xlo = std::min(xlo, s.x[i]), xhi = std::max(xhi, s.x[i]);
      ylo = std::min(ylo, s.y[i]), yhi = std::max(yhi, s.y[i]);
    }
  if (chart.x_marker >= 0) xlo = std::min(xlo, chart.x_marker), xhi = std::max(xhi, chart.x_marker);
  if (!(xlo <= xhi)) xlo = 0, xhi = 1;
  if (!(ylo <= yhi)) ylo = 0, yhi = 1;
  const Axis y = nice_axis(ylo, yhi, false);
  const Axis x = nice_axis(xlo, xhi, true);
  draw_frame(c, chart.title, chart.y_label, y);
  const double px0 = kLeft, px1 = kWidth - kRight, py0 = kHeight - kBottom, py1 = kTop;
  const auto px = [&](double v) { return px0 + (v - x.lo) / (x.hi - x.lo) * (px1 - px0); };
  const auto py = [&](double v) { return py0 - (v - y.lo) / (y.hi - y.lo) * (py0 - py1); };
  c.colour({0.2, 0.2, 0.2});
  for (double v = x.lo; v <= x.hi + x.step * 1e-9; v += x.step) {
    c.line(px(v), py0, px(v), py0 + 5, 1);
    c.text(format_tick(v, x.step), px(v), py0 + 20, 11, 0.5);
  }
  c.text(chart.x_label, (px0 + px1) / 2, py0 + 45, 13, 0.5);
  if (chart.x_marker >= 0) {
    c.colour({0.75, 0.1, 0.1});
    const double dash[] = {6, 4};
    cairo_set_dash(cr, dash, 2, 0);
    c.line(px(chart.x_marker), py0, px(chart.x_marker), py1, 1.5);
    cairo_set_dash(cr, nullptr, 0, 0);
    const bool left_half = px(chart.x_marker) < (px0 + px1) / 2;  // the label on the side with room
    c.text(chart.x_marker_label, px(chart.x_marker) + (left_half ? 6 : -6), py1 + 16, 11, left_half ? 0 : 1);
  }
  const auto legend = legend_layout(cr, labels, kRight);
  for (size_t k = 0; k < chart.series.size(); ++k) {
    const ScatterSeries& s = chart.series[k];
    const Rgb col = s.colour < 0 ? Rgb{0.62, 0.62, 0.62} : kPalette[size_t(s.colour) % std::size(kPalette)];
    const size_t n = std::min(s.x.size(), s.y.size());
    c.colour(col);
    if (s.line && n > 1) {
      cairo_new_path(cr);
      cairo_set_line_width(cr, 2);
      for (size_t i = 0; i < n; ++i) {
        if (i == 0) cairo_move_to(cr, px(s.x[i]), py(s.y[i]));
        else cairo_line_to(cr, px(s.x[i]), py(s.y[i]));
      }
      cairo_stroke(cr);
    }
    const auto mark = [&](double cx, double cy) {
      cairo_new_path(cr);
      cairo_arc(cr, cx, cy, s.radius, 0, 2 * M_PI);
      if (s.hollow) {
        cairo_set_line_width(cr, 1.5);
        cairo_stroke(cr);
      } else {
        cairo_fill(cr);
      }
    };
    for (size_t i = 0; i < n; ++i) mark(px(s.x[i]), py(s.y[i]));
    const auto [lx, ly] = legend[k];
    c.colour(col);
    if (s.line) c.line(lx, ly - 4, lx + 30, ly - 4, 2);
    mark(lx + 15, ly - 4);
    c.colour({0, 0, 0});
    c.text(s.label, lx + 38, ly, 12);
  }
  c.write(path);
}

void write_waterfall_png(const WaterfallChart& chart, const std::string& path) {
  Canvas c = chart_canvas();
  cairo_t* cr = c.cr.get();
  double hi = chart.reference;
  for (const WaterfallBar& b : chart.bars) hi = std::max(hi, b.value);
  const Axis y = nice_axis(0, hi * 1.05, true);
  draw_frame(c, chart.title, chart.y_label, y);

  const double px0 = kLeft, px1 = kWidth - kRight, py0 = kHeight - kBottom, py1 = kTop;
  const auto py = [&](double v) { return py0 - (v - y.lo) / (y.hi - y.lo) * (py0 - py1); };
  const size_t n = std::max<size_t>(chart.bars.size(), 1);
  const double slot = (px1 - px0) / double(n), width = slot * 0.62;
  double previous = 0;
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const WaterfallBar& b = chart.bars[i];
    const double from = b.kind == WaterfallBar::Kind::Total ? 0 : previous;
    const double x = px0 + slot * double(i) + (slot - width) / 2;
    const double top = py(std::max(from, b.value)), bottom = py(std::min(from, b.value));
    const Rgb col = b.kind == WaterfallBar::Kind::Total         ? Rgb{0.00, 0.45, 0.70}
                    : b.kind == WaterfallBar::Kind::Unexplained ? Rgb{0.60, 0.60, 0.60}
                    : b.value >= from                           ? Rgb{0.84, 0.37, 0.00}
                                                                : Rgb{0.00, 0.62, 0.45};
    c.colour(col);
    cairo_rectangle(cr, x, top, width, std::max(bottom - top, 1.0));
    cairo_fill(cr);
    if (b.kind == WaterfallBar::Kind::Unexplained) {  // hatch: not a modelled effect
      c.colour({1, 1, 1}, 0.8);
      cairo_save(cr);
      cairo_rectangle(cr, x, top, width, std::max(bottom - top, 1.0));
      cairo_clip(cr);
      for (double d = -(bottom - top); d < width; d += 8) c.line(x + d, bottom, x + d + (bottom - top), top, 1.5);
      cairo_restore(cr);
    }
    if (i + 1 < chart.bars.size()) {  // connector to the next bar
      c.colour({0.4, 0.4, 0.4});
      c.line(x + width, py(b.value), x + slot, py(b.value), 0.8);
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, b.kind == WaterfallBar::Kind::Total ? "%.2f" : "%+.2f", b.value - from);
    c.colour({0, 0, 0});
    c.text(buf, x + width / 2, top - 5, 10, 0.5);
    c.text(b.label, x + width / 2, py0 + 14, 10, 1, -M_PI / 5);
    previous = b.value;
  }
  if (chart.reference >= 0) {
    c.colour({0.75, 0.1, 0.1});
    const double dash[] = {6, 4};
    cairo_set_dash(cr, dash, 2, 0);
    c.line(px0, py(chart.reference), px1, py(chart.reference), 1.8);
    cairo_set_dash(cr, nullptr, 0, 0);
    c.text(chart.reference_label, px0 + 8, py(chart.reference) - 6, 12, 0);
  }
  c.write(path);
}

}  // namespace stepsim::plot
