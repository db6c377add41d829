// A Cairo image to draw a PNG on (the charts, the topology picture): white background, sans-serif
// text anchored where asked, lines, and a write that goes through io::write_output_file (a
// temporary file renamed into place).
#pragma once

#include <cairo.h>

#include <memory>
#include <string>

#include "vocabulary/config_error.hpp"
#include "simulator/io/output_file.hpp"

namespace stepsim::plot {

struct Rgb {
  double r, g, b;
};
// A colour-blind-safe palette (Okabe-Ito).
inline constexpr Rgb kPalette[] = {{0.00, 0.45, 0.70}, {0.84, 0.37, 0.00}, {0.00, 0.62, 0.45},
                                   {0.80, 0.47, 0.65}, {0.34, 0.71, 0.91}, {0.90, 0.62, 0.00}};

using SurfacePtr = std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)>;
using ContextPtr = std::unique_ptr<cairo_t, decltype(&cairo_destroy)>;

struct Canvas {
  SurfacePtr surface;
  ContextPtr cr;

  Canvas(int width, int height)
      : surface(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height), &cairo_surface_destroy),
        cr(cairo_create(surface.get()), &cairo_destroy) {
    cairo_set_source_rgb(cr.get(), 1, 1, 1);
    cairo_paint(cr.get());
    cairo_select_font_face(cr.get(), "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  }
  void colour(Rgb c, double alpha = 1) { cairo_set_source_rgba(cr.get(), c.r, c.g, c.b, alpha); }
  // Width of `s` at `size`.
  double text_width(const std::string& s, double size) {
    cairo_set_font_size(cr.get(), size);
    cairo_text_extents_t ext;
    cairo_text_extents(cr.get(), s.c_str(), &ext);
    return ext.x_advance;
  }
  // Text anchored at (x, y): align 0 = left, 0.5 = centre, 1 = right; baseline at y.
  void text(const std::string& s, double x, double y, double size, double align = 0, double angle = 0) {
    const double w = text_width(s, size);
    cairo_save(cr.get());
    cairo_translate(cr.get(), x, y);
    cairo_rotate(cr.get(), angle);
    cairo_move_to(cr.get(), -align * w, 0);
    cairo_show_text(cr.get(), s.c_str());
    cairo_restore(cr.get());
  }
  void line(double x0, double y0, double x1, double y1, double width) {
    cairo_set_line_width(cr.get(), width);
    cairo_move_to(cr.get(), x0, y0);
    cairo_line_to(cr.get(), x1, y1);
    cairo_stroke(cr.get());
  }
  // Encoded in memory, then written through io::write_output_file (temporary file, renamed).
  void write(const std::string& path) {
    cairo_surface_flush(surface.get());
    std::string png;
    const auto append = [](void* closure, const unsigned char* data, unsigned int length) {
      static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
      return CAIRO_STATUS_SUCCESS;
    };
    if (cairo_surface_write_to_png_stream(surface.get(), append, &png) != CAIRO_STATUS_SUCCESS)
      throw ConfigError(path + ": cannot encode the PNG chart");
    io::write_output_file(path, "--png", io::kDashBinary, png);  // every chart is a --png (a sweep's by default)
  }
};

}  // namespace stepsim::plot
