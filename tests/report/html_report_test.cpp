// The HTML report's pieces on hand-built results: where each layer's time goes (by hand), and the
// timeline kept to a sane size (neighbouring ops merged, the page saying so).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "simulator/config/config_loader.hpp"
#include "simulator/report/html_report.hpp"
#include "simulator/report/layer_breakdown.hpp"
#include "tests/report/chromium.hpp"
#include "tests/scratch_dir.hpp"

namespace stepsim {
namespace {

using ops::OpKind;

Span span(int32_t rank, OpKind kind, uint16_t layer, double a, double b, uint8_t stream = 0) {
  Span s;
  s.rank = rank;
  s.stream = stream;
  s.start_s = a;
  s.end_s = b;
  s.tag.kind = kind;
  s.tag.layer = layer;
  return s;
}

IdleSpan idle(int32_t rank, uint8_t classes, double a, double b) { return {rank, classes, a, b}; }

constexpr uint8_t kEp = 1u << unsigned(ops::CommClass::Ep), kPp = 1u << unsigned(ops::CommClass::Pp);

// One GPU whose step is all compute: what the page's plan-level parts need (tests add spans).
SimResult one_gpu_result(double step_s, const std::string& workload) {
  SimResult r;
  r.step_time_s = step_s;
  r.workload = workload;
  r.mode = "full";
  RankResult rank;
  rank.rank = 0;
  rank.step_time_s = step_s;
  rank.compute_s = step_s;
  r.ranks.push_back(rank);
  return r;
}

std::string html_page(const Plan& plan, const SimResult& r) {
  HtmlReportInput in;
  in.plan = &plan;
  in.result = &r;
  in.command = "stepsim report";
  in.version = "stepsim test";
  std::ostringstream out;
  write_html_report(in, out);
  return out.str();
}

TEST(LayerBreakdown, WaitsAreChargedToTheOpThatRanAfterThemPerGpuHoldingTheLayer) {
  SimResult r;
  // GPU 0: layer 3's attention and experts, a wait on EP before the experts, a wait on EP and PP
  // before layer 4's attention, then bubble. GPU 1 also holds layer 3 (its attention only).
  r.spans = {span(0, OpKind::Attention, 3, 0, 1), span(0, OpKind::MoeGemm, 3, 1.5, 3),
             span(0, OpKind::Attention, 4, 4, 5), span(1, OpKind::Attention, 3, 0, 2),
             span(0, OpKind::EpDispatch, 3, 1, 1.5, 1)};  // a transfer: not compute
  r.idle_spans = {idle(0, kEp, 1, 1.5), idle(0, kEp | kPp, 3, 4), idle(0, 0, 5, 6)};
  const LayerBreakdown b = layer_breakdown(r);
  ASSERT_EQ(b.parts.size(), 4u);
  EXPECT_EQ(b.parts[0].name, "attention");
  EXPECT_EQ(b.parts[1].name, "routed experts");
  EXPECT_EQ(b.parts[2].name, "exposed EP all-to-all");
  EXPECT_EQ(b.parts[3].name, "exposed PP send/recv");
  ASSERT_EQ(b.rows.size(), 2u);  // layers 3 and 4; nothing outside layers (bubble is not charged)
  EXPECT_EQ(b.rows[0].label, "layer 3");
  EXPECT_EQ(b.rows[0].gpus, 2);
  // Per GPU holding layer 3: attention (1 + 2) / 2, experts 1.5 / 2, the EP wait 0.5 / 2.
  EXPECT_DOUBLE_EQ(b.rows[0].seconds[0], 1.5);
  EXPECT_DOUBLE_EQ(b.rows[0].seconds[1], 0.75);
  EXPECT_DOUBLE_EQ(b.rows[0].seconds[2], 0.25);
  EXPECT_DOUBLE_EQ(b.rows[0].seconds[3], 0.0);
  // Layer 4 on GPU 0 alone: the 1 s wait on EP and PP at once, half to each.
  EXPECT_EQ(b.rows[1].gpus, 1);
  EXPECT_DOUBLE_EQ(b.rows[1].seconds[0], 1.0);
  EXPECT_DOUBLE_EQ(b.rows[1].seconds[2], 0.5);
  EXPECT_DOUBLE_EQ(b.rows[1].seconds[3], 0.5);
}

TEST(LayerBreakdown, TrailingWaitsAndUnlayeredOpsGoOutsideLayers) {
  SimResult r;
  r.spans = {span(0, OpKind::DenseMlp, 0, 0, 1), span(0, OpKind::Head, ops::kNoIndex, 1, 2)};
  r.idle_spans = {idle(0, 1u << unsigned(ops::CommClass::Dp), 2, 2.5)};  // after the last op
  const LayerBreakdown b = layer_breakdown(r);
  ASSERT_EQ(b.rows.size(), 2u);
  EXPECT_EQ(b.rows[1].label, "outside layers");
  ASSERT_EQ(b.parts.size(), 3u);  // dense MLP, LM head / embedding, exposed DP
  EXPECT_DOUBLE_EQ(b.rows[1].seconds[1], 1.0);
  EXPECT_DOUBLE_EQ(b.rows[1].seconds[2], 0.5);
}

// The page's data block, parsed back.
nlohmann::json page_data(const std::string& html) {
  const std::string open = "id=\"stepsim-data\">";
  const size_t a = html.find(open), b = html.find("</script>", a);
  return nlohmann::json::parse(html.substr(a + open.size(), b - a - open.size()));
}

TEST(HtmlReport, ATimelineTooLargeIsMergedToTheCapAndThePageSaysSo) {
  const Plan plan = load_plan(default_config_path(), {"workload.kind=synthetic", "parallel.pp=2"});
  SimResult r = one_gpu_result(10, "synthetic");
  // 200,000 ops of 40 us, 10 us apart, alternating two kinds every 1,000 ops.
  const size_t n = 200000;
  for (size_t i = 0; i < n; ++i) {
    const double a = double(i) * 50e-6;
    r.spans.push_back(span(0, (i / 1000) % 2 ? OpKind::Attention : OpKind::DenseMlp, uint16_t(i % 60), a, a + 40e-6));
  }
  r.has_spans = true;
  const std::string html = html_page(plan, r);
  const auto data = page_data(html);
  const auto& rows = data["timeline"]["rows"];
  ASSERT_EQ(rows.size(), 1u);
  const auto& ev = rows[0]["ev"];
  const size_t blocks = ev.size() / 8;
  EXPECT_LE(blocks, kMaxTimelineBlocks);
  EXPECT_GE(blocks, 200u);  // merged within each run of one kind, never across kinds
  // Every op is still counted and the step still covered from the first op to the last.
  int64_t ops = 0, t = 0, first = -1;
  for (size_t i = 0; i < blocks; ++i) {
    const int64_t start = t + ev[8 * i].get<int64_t>();
    if (first < 0) first = start;
    t = start + ev[8 * i + 1].get<int64_t>();
    ops += ev[8 * i + 7].get<int64_t>();
  }
  EXPECT_EQ(ops, int64_t(n));
  EXPECT_EQ(first, 0);
  EXPECT_EQ(t, int64_t(std::llround((double(n - 1) * 50e-6 + 40e-6) * 1e9)));
  EXPECT_NE(html.find("are drawn as one block"), std::string::npos);

  // Under the cap, every op is its own block.
  r.spans.resize(1000);
  const std::string small = html_page(plan, r);
  EXPECT_EQ(page_data(small)["timeline"]["rows"][0]["ev"].size(), 8u * 1000);
  EXPECT_NE(small.find("every op is drawn"), std::string::npos);
}

// Ops whose kinds alternate op by op (attention, MLP, attention, ...) never form a run of one kind,
// so merging only neighbours of one kind cannot shrink them (the timeline of a Megatron 70B step
// never fitted and its report never finished). Past the cap, ops close together join as mixed
// blocks that keep each kind's time.
TEST(HtmlReport, OpsOfAlternatingKindsAreMergedToTheCapKeepingEachKindsTime) {
  const Plan plan = load_plan(default_config_path(), {"workload.kind=synthetic", "parallel.pp=2"});
  SimResult r = one_gpu_result(10, "synthetic");
  // 200,000 ops of 40 us every 50 us on the compute stream, their kinds alternating, a 10 us
  // bubble after each; and on a second row 4 streams' sends of 200 us each, overlapping, every 50 us.
  const size_t n = 200000;
  for (size_t i = 0; i < n; ++i) {
    const double a = double(i) * 50e-6;
    r.spans.push_back(span(0, i % 2 ? OpKind::Attention : OpKind::DenseMlp, uint16_t(i % 60), a, a + 40e-6));
    r.idle_spans.push_back(idle(0, 0, a + 40e-6, a + 50e-6));
    r.spans.push_back(span(0, OpKind::PpSend, ops::kNoIndex, a, a + 200e-6, uint8_t(1 + i % 4)));
  }
  r.has_spans = true;
  const std::string html = html_page(plan, r);
  const auto data = page_data(html);
  const auto& tl = data["timeline"];
  const auto& rows = tl["rows"];
  ASSERT_EQ(rows.size(), 2u);
  size_t blocks = 0;
  for (const auto& row : rows) blocks += row["ev"].size() / 8;
  EXPECT_LE(blocks, kMaxTimelineBlocks);
  EXPECT_GE(blocks, kMaxTimelineBlocks / 8);  // merged no further than needed (one doubling past the cap at most)
  // Per category on the compute row: 100,000 ops of 40 us each of attention and MLP (4 s each),
  // 200,000 bubbles of 10 us (2 s); every op counted once.
  std::map<std::string, int64_t> ns_by_cat;
  int64_t ops = 0;
  const auto& ev = rows[0]["ev"];
  for (size_t i = 0; i < ev.size() / 8; ++i) {
    const int64_t kind = ev[8 * i + 3].get<int64_t>();
    ops += ev[8 * i + 7].get<int64_t>();
    if (kind == -3) {
      const auto& parts = tl["mix"][ev[8 * i + 4].get<size_t>()];
      for (size_t p = 0; p < parts.size(); p += 2)
        ns_by_cat[tl["cats"][parts[p].get<size_t>()]["name"]] += parts[p + 1].get<int64_t>();
    } else {
      ns_by_cat[tl["cats"][ev[8 * i + 2].get<size_t>()]["name"]] += ev[8 * i + 1].get<int64_t>();
    }
  }
  EXPECT_EQ(ops, int64_t(n));
  EXPECT_NEAR(double(ns_by_cat["attention"]), 4e9, 1e3);
  EXPECT_NEAR(double(ns_by_cat["MLP / experts"]), 4e9, 1e3);
  EXPECT_NEAR(double(ns_by_cat["bubble (idle, waiting for another stage or the schedule)"]), 2e9, 1e3);
  EXPECT_NE(html.find("join it as a mixed block"), std::string::npos);

  // The page draws the mixed blocks without an error, and hovering one names its parts.
  const test::ScratchDir dir;
  std::string used = html;
  used.replace(used.rfind("</body>"), 7, R"(<script>
(function () {
  var c = document.getElementById('timeline'), r = c.getBoundingClientRect();
  c.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: r.left + r.width / 2, clientY: r.top + 44}));
  document.body.setAttribute('data-tip', document.getElementById('tip').textContent);
})();
</script>
</body>)");
  const auto browser = test::load_in_chromium(dir.write("mixed.html", used));
  ASSERT_TRUE(browser.ran);
  EXPECT_NE(browser.dom.find("<html lang=\"en\">"), std::string::npos) << browser.dom.substr(0, 2000);  // no data-errors
  EXPECT_NE(browser.dom.find("data-drawn=\"step ranks timeline"), std::string::npos);
  EXPECT_NE(browser.dom.find("ops merged (attention"), std::string::npos) << browser.dom.substr(0, 2000);
}

// The plan table says what the data-parallel collectives move, a release's defaults included: NeMo
// 25's recipes reduce gradients in BF16 and keep and gather FP8 weights in FP8; Megatron-Core r0.8's
// launches reduce in FP32 and gather BF16.
TEST(HtmlReport, ThePrecisionRowNamesTheGradientAndWeightFormatsTheCollectivesMove) {
  const auto precision_row = [](std::vector<std::string> sets) {
    const Plan plan = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml", sets);
    const std::string html = html_page(plan, one_gpu_result(1, "llama"));
    const size_t at = html.find(">precision<");
    return at == std::string::npos ? std::string() : html.substr(at, html.find("</tr>", at) - at);
  };
  const std::string nemo = precision_row({"software.profile=nemo-25", "train.precision=fp8"});
  EXPECT_NE(nemo.find("gradients reduced in BF16"), std::string::npos) << nemo;
  EXPECT_NE(nemo.find("weights kept and gathered in their format"), std::string::npos) << nemo;
  const std::string r08 = precision_row({"software.profile=megatron-core-r0.8", "train.precision=fp8"});
  EXPECT_NE(r08.find("gradients reduced in FP32"), std::string::npos) << r08;
  EXPECT_EQ(r08.find("gathered"), std::string::npos) << r08;
}

// The model row names the shared expert as the config gives it: DeepSeek-V3's one shared expert
// (n_shared_experts 1, the routed experts' width) as a count, a launch's
// --moe-shared-expert-intermediate-size as a width, where "0 shared" used to hide it.
TEST(HtmlReport, TheModelRowNamesASharedExpertByItsWidthOrCount) {
  const auto model_row = [](const std::string& config) {
    const Plan plan = load_plan(config, {});
    const std::string html = html_page(plan, one_gpu_result(1, "moe"));
    const size_t at = html.find(">model<");
    return at == std::string::npos ? std::string() : html.substr(at, html.find("</tr>", at) - at);
  };
  const std::string seed = model_row(default_config_path());
  EXPECT_NE(seed.find("256 routed experts (top 8), 1 shared"), std::string::npos) << seed;
  const std::string launch =
      model_row(std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/checks/DSV3-GB200-256-MXFP8-MLM.yaml");
  EXPECT_NE(launch.find("256 routed experts (top 8), a shared expert 2048 wide"), std::string::npos) << launch;
}

// The text reports' experts: line is a row of the plan table too, the paged stash named where it runs.
TEST(HtmlReport, ThePlanTableHasTheExpertsRow) {
  const auto experts_row = [](const std::string& config, std::vector<std::string> sets) {
    const Plan plan = load_plan(config, sets);
    const std::string html = html_page(plan, one_gpu_result(1, "moe"));
    const size_t at = html.find(">experts<");
    return at == std::string::npos ? std::string() : html.substr(at, html.find("</tr>", at) - at);
  };
  const std::string qwen = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/QW-X-039.yaml";
  const std::string stashed = experts_row(qwen, {});
  EXPECT_NE(stashed.find("EP 8 (deepep dispatcher run by HybridEP)"), std::string::npos) << stashed;
  EXPECT_NE(stashed.find("paged stash"), std::string::npos) << stashed;
  EXPECT_EQ(experts_row(qwen, {"parallel.moe_paged_stash=false"}).find("paged stash"), std::string::npos);
  const std::string dense = experts_row(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml", {});
  EXPECT_TRUE(dense.empty()) << dense;
}

TEST(HtmlReport, EscapesMarkupAndKeepsUtf8Printable) {
  EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(html_escape("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(html_escape(std::string("a\xff") + "b\n"), "a\\xffb ");
}

}  // namespace
}  // namespace stepsim
