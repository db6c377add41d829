// PNG charts: the files are real PNGs of the stated size, and the drawing lands where the data
// says (pixels read back with Cairo).
#include <gtest/gtest.h>

#include <cairo.h>

#include <filesystem>
#include <string>
#include <unistd.h>

#include "vocabulary/config_error.hpp"
#include "../scratch_dir.hpp"
#include "simulator/plot/chart.hpp"

namespace {

std::string temp_png(const std::string& name) {
  return stepsim::test::process_scratch().file(name + ".png");
}

struct Image {
  cairo_surface_t* s;
  explicit Image(const std::string& path) : s(cairo_image_surface_create_from_png(path.c_str())) {}
  ~Image() { cairo_surface_destroy(s); }
  bool ok() const { return cairo_surface_status(s) == CAIRO_STATUS_SUCCESS; }
  // Blue channel minus red channel of one pixel (the first series is blue-ish, background white).
  int blueness(int x, int y) const {
    const unsigned char* d = cairo_image_surface_get_data(s);
    const int stride = cairo_image_surface_get_stride(s);
    const unsigned char* p = d + y * stride + x * 4;  // ARGB32, little-endian: B G R A
    return int(p[0]) - int(p[2]);
  }
};

TEST(Chart, LineChartIsAPngWithTheSeriesDrawn) {
  stepsim::plot::LineChart c;
  c.title = "t";
  c.x_label = "x";
  c.y_label = "y";
  c.series.push_back({"sim", {1, 2, 4, 8}, {10, 20, 30, 40}, false});
  c.series.push_back({"roofline", {1, 2, 4, 8}, {12, 22, 32, 42}, true});
  c.log2_x = true;
  const auto path = temp_png("line");
  stepsim::plot::write_line_chart_png(c, path);
  Image img(path);
  ASSERT_TRUE(img.ok());
  EXPECT_EQ(cairo_image_surface_get_width(img.s), 960);
  EXPECT_EQ(cairo_image_surface_get_height(img.s), 600);
  // The plot area spans x 110..910 and y 490 (value 0) .. 60 (value 40: the y axis ends at 40 or
  // 50 with ticks of 10). The first point (x=1, y=10) is the left edge of the x range.
  // With ticks of 10 up to 50 (axis rounded above 42): y=10 maps to 490 - 10/50*430 = 404.
  EXPECT_GT(img.blueness(110, 404), 60);
  // A white pixel far from every series.
  EXPECT_EQ(img.blueness(800, 470), 0);
  std::filesystem::remove(path);
}

TEST(Chart, WaterfallIsAPng) {
  stepsim::plot::WaterfallChart c;
  c.title = "w";
  c.y_label = "s";
  c.bars = {{"speed of light", 6.6, stepsim::plot::WaterfallBar::Kind::Total},
            {"kernels", 13.0, stepsim::plot::WaterfallBar::Kind::Step},
            {"unexplained", 19.9, stepsim::plot::WaterfallBar::Kind::Unexplained}};
  c.reference = 19.9;
  c.reference_label = "reported";
  const auto path = temp_png("waterfall");
  stepsim::plot::write_waterfall_png(c, path);
  Image img(path);
  ASSERT_TRUE(img.ok());
  // First bar (blue total from 0 to 6.6, axis 0..25 by 5): its middle at x = 90 + 280/2... the
  // slot is 840/3 = 280 wide, so the bar centre is at x = 230; value 3 maps to y = 490 - 3/25*430.
  EXPECT_GT(img.blueness(230, 490 - int(3.0 / 25 * 430)), 60);
  std::filesystem::remove(path);
}

TEST(Chart, UnwritablePathIsAConfigError) {
  stepsim::plot::LineChart c;
  EXPECT_THROW(stepsim::plot::write_line_chart_png(c, "/nonexistent-dir/x.png"), stepsim::ConfigError);
}

}  // namespace
