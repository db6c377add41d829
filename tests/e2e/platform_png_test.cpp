// `stepsim platform --png`: the cluster drawn switch by switch for a small cluster (a cut cable in
// red, only when there is one) and as one of each kind for a large one; no XML on stdout then.
#include <gtest/gtest.h>

#include <cairo.h>

#include <string>

#include "platforms/cluster_platform.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/plot/topology_chart.hpp"
#include "tests/cli_runner.hpp"

namespace {

using stepsim::test::CliResult;
using stepsim::test::run_stepsim;

struct Png {
  int width = 0, height = 0;
  long red = 0;  // pixels of the fault colour (about 204, 26, 26)
};

Png read_png(const std::string& path) {
  Png p;
  cairo_surface_t* s = cairo_image_surface_create_from_png(path.c_str());
  if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(s);
    return p;
  }
  p.width = cairo_image_surface_get_width(s);
  p.height = cairo_image_surface_get_height(s);
  const int stride = cairo_image_surface_get_stride(s);
  const unsigned char* data = cairo_image_surface_get_data(s);
  for (int y = 0; y < p.height; ++y)
    for (int x = 0; x < p.width; ++x) {
      const uint32_t px = *reinterpret_cast<const uint32_t*>(data + y * stride + 4 * x);  // ARGB32, premultiplied
      const int r = (px >> 16) & 0xff, g = (px >> 8) & 0xff, b = px & 0xff;
      p.red += r > 170 && g < 70 && b < 70 ? 1 : 0;
    }
  cairo_surface_destroy(s);
  return p;
}

// The 8-layer DeepSeek-V3 on 4 nodes on a fat tree of one node per leaf (tests/e2e/topology_cli_test.cpp).
const std::string kSmallTree =
    " --set model.num_hidden_layers=8 --set cluster.nodes=4 --set parallel.pp=2 --set parallel.ep=16"
    " --set train.global_batch=64 --set parallel.microbatches=4 --set cluster.topology=fat-tree"
    " --set cluster.leaf_nics=8";

TEST(PlatformPng, ASmallClusterIsDrawnWithItsCutCableInRed) {
  const stepsim::test::ScratchDir dir;
  const std::string healthy = dir.file("healthy.png"), cut = dir.file("cut.png");
  const CliResult a = run_stepsim("platform" + kSmallTree + " --png " + healthy);
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_TRUE(a.out.empty()) << "no XML on stdout when only --png is asked for";
  const CliResult b =
      run_stepsim("platform" + kSmallTree + " --set 'scenario.stragglers=[{leaf: 0, spine: 3, link: down}]' --png " + cut);
  ASSERT_EQ(b.code, 0) << b.err;
  const Png h = read_png(healthy), c = read_png(cut);
  EXPECT_EQ(h.width, 1400);
  EXPECT_GT(h.height, 300);
  EXPECT_EQ(h.red, 0);
  EXPECT_GT(c.red, 200);  // the cable, its legend mark and the fault line
  EXPECT_TRUE(stepsim::plot::topology_drawn_in_full(
      stepsim::FabricShape::of(stepsim::load_plan(stepsim::default_config_path(),
                                                  {"model.num_hidden_layers=8", "cluster.nodes=4", "parallel.pp=2",
                                                   "parallel.ep=16", "train.global_batch=64",
                                                   "parallel.microbatches=4", "cluster.topology=fat-tree",
                                                   "cluster.leaf_nics=8"}))));
}

TEST(PlatformPng, ALargeClusterIsSummarisedAndXmlStillGoesWhereAsked) {
  const stepsim::test::ScratchDir dir;
  const std::string png = dir.file("p.png"), xml = dir.file("p.xml");
  // The default plan: 256 nodes on a star, 2048 GPUs.
  const CliResult r = run_stepsim("platform --png " + png + " -o " + xml);
  ASSERT_EQ(r.code, 0) << r.err;
  const Png p = read_png(png);
  EXPECT_EQ(p.width, 1400);
  EXPECT_LT(p.height, 1200);  // one node drawn, not 256
  EXPECT_NE(run_stepsim("platform").out.find("<platform"), std::string::npos);
  std::FILE* f = std::fopen(xml.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  EXPECT_FALSE(stepsim::plot::topology_drawn_in_full(
      stepsim::FabricShape::of(stepsim::load_plan(stepsim::default_config_path(), {}))));
  // A bad --png path fails before anything is written.
  const CliResult bad = run_stepsim("platform --png " + dir.file("missing/p.png") + " -o " + dir.file("q.xml"));
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--png"), std::string::npos) << bad.err;
  EXPECT_EQ(std::fopen(dir.file("q.xml").c_str(), "r"), nullptr);
}

}  // namespace
