// `stepsim report` end to end: one self-contained HTML file (nothing fetched from anywhere), which
// headless Chromium draws with no error; user text escaped; the output path checked before any
// replay; the same inputs give the same bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <cctype>
#include <sstream>
#include <string>

#include "tests/cli_runner.hpp"
#include "tests/report/chromium.hpp"

namespace {

namespace fs = std::filesystem;
using stepsim::test::CliResult;
using stepsim::test::run_stepsim;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The 8-layer DeepSeek-V3 on 4 nodes of tests/e2e/routing_cli_test.cpp: a replay of a second.
const std::string kSmall =
    " --set model.num_hidden_layers=8 --set cluster.nodes=4 --set parallel.pp=2 --set parallel.ep=16"
    " --set train.global_batch=64 --set parallel.microbatches=4";

// What would make a browser reach outside the file: a URL with a scheme anywhere, a tag's src/href/
// action that is not a fragment of the page itself ("#plan"), any url(...) or @import in CSS, a
// <link>, <iframe>, <object>, <embed> or <base>. Returns the first one found, or "". (Plain string
// search: std::regex recurses per character and the page is a megabyte.)
std::string external_reference(const std::string& page) {
  std::string html = page;
  for (char& c : html) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (const char* bad : {"http:", "https:", "ftp:", "file:", "@import", "url(", "<link", "<iframe", "<object",
                          "<embed", "<base"})
    if (const size_t at = html.find(bad); at != std::string::npos) return page.substr(at, 60);
  // Attributes inside tags (a '<' followed by a letter up to its '>'); escaped text is no tag.
  for (size_t lt = html.find('<'); lt != std::string::npos; lt = html.find('<', lt + 1)) {
    if (lt + 1 >= html.size() || !std::isalpha(static_cast<unsigned char>(html[lt + 1]))) continue;
    const std::string tag = html.substr(lt, html.find('>', lt) - lt);
    for (const char* attr : {" src=", " href=", " action=", " poster=", " srcset=", " data="}) {
      const size_t at = tag.find(attr);
      if (at == std::string::npos) continue;
      size_t v = at + std::string(attr).size();
      while (v < tag.size() && (tag[v] == '"' || tag[v] == '\'')) ++v;
      if (v >= tag.size() || tag[v] != '#') return page.substr(lt, 80);
    }
  }
  return "";
}

// The attributes of the DOM's <html> element (where the page's error trap counts errors).
std::string html_tag(const std::string& dom) {
  const size_t at = dom.find("<html");
  return at == std::string::npos ? "" : dom.substr(at, dom.find('>', at) - at);
}
std::string body_tag(const std::string& dom) {
  const size_t at = dom.find("<body");
  return at == std::string::npos ? "" : dom.substr(at, dom.find('>', at) - at);
}

TEST(ReportCli, OneSelfContainedPageThatChromiumDrawsWithoutErrors) {
  const stepsim::test::ScratchDir dir;
  const std::string page = dir.file("step report.html");  // a space in the name, as users have
  const CliResult r = run_stepsim("report" + kSmall + " -o '" + page + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("waterfall replay"), std::string::npos) << r.err;  // progress on stderr
  // One file, no temporary left beside it.
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1u);
  const std::string html = slurp(page);
  ASSERT_GT(html.size(), 10000u);
  EXPECT_EQ(external_reference(html), "");
  // Every section is there: the plan, the step, the timeline, memory, layers, the waterfall and the
  // command that reproduces the page.
  for (const char* id : {"id=\"plan\"", "id=\"step-chart\"", "id=\"ranks-chart\"", "id=\"timeline\"",
                         "id=\"memory-chart\"", "id=\"layers-chart\"", "id=\"waterfall-chart\"", "stepsim report"})
    EXPECT_NE(html.find(id), std::string::npos) << id;

  const auto browser = stepsim::test::load_in_chromium(page);
  ASSERT_TRUE(browser.ran);
  EXPECT_EQ(html_tag(browser.dom), "<html lang=\"en\"") << browser.dom.substr(0, 3000);
  EXPECT_EQ(browser.console, "");  // the page logs nothing at all
  // The script ran to its end and drew every chart.
  EXPECT_EQ(body_tag(browser.dom), "<body data-drawn=\"step ranks timeline memory layers waterfall\"");
  size_t svgs = 0;
  for (size_t at = browser.dom.find("<svg"); at != std::string::npos; at = browser.dom.find("<svg", at + 1)) ++svgs;
  EXPECT_GE(svgs, 5u);  // step, per GPU, memory, layers, waterfall

  // The timeline used as a reader would: zoom with the wheel, hover an op (its tooltip names it),
  // drag, double-click, the buttons. Any exception lands in data-errors.
  std::string used = html;
  const std::string script = R"(<script>
(function () {
  var c = document.getElementById('timeline'), r = c.getBoundingClientRect();
  function mouse(type, x, y, target) {
    (target || c).dispatchEvent(new MouseEvent(type, {bubbles: true, cancelable: true, clientX: r.left + x, clientY: r.top + y}));
  }
  for (var i = 0; i < 6; ++i)
    c.dispatchEvent(new WheelEvent('wheel', {bubbles: true, cancelable: true, clientX: r.left + r.width / 2,
                                             clientY: r.top + 40, deltaY: -100}));
  mouse('mousemove', r.width / 2, 44);
  document.body.setAttribute('data-tip', document.getElementById('tip').textContent);
  mouse('mousedown', r.width / 2, 44);
  mouse('mousemove', r.width / 2 - 200, 44, window);
  mouse('mousemove', r.width / 2 - 200, 44);
  mouse('mouseup', r.width / 2 - 200, 44, window);
  mouse('dblclick', r.width / 2, 44);
  ['tl-in', 'tl-out', 'tl-reset'].forEach(function (id) { document.getElementById(id).click(); });
  mouse('mouseleave', 0, 0);
  document.body.setAttribute('data-used', 'yes');
})();
</script>
</body>)";
  used.replace(used.rfind("</body>"), 7, script);
  const std::string used_page = dir.file("used.html");
  std::ofstream(used_page, std::ios::binary) << used;
  const auto after = stepsim::test::load_in_chromium(used_page);
  ASSERT_TRUE(after.ran);
  EXPECT_EQ(html_tag(after.dom), "<html lang=\"en\"") << after.dom.substr(0, 3000);
  EXPECT_NE(body_tag(after.dom).find("data-used=\"yes\""), std::string::npos) << body_tag(after.dom);
  EXPECT_NE(body_tag(after.dom).find("data-tip=\"GPU 0 compute"), std::string::npos) << body_tag(after.dom);
}

// The check above can fail: the same page with its data broken (the timeline's rows no longer a
// list) throws inside the page's script, and the DOM says so.
TEST(ReportCli, AScriptErrorInThePageIsCaught) {
  const stepsim::test::ScratchDir dir;
  const std::string page = dir.file("r.html");
  const CliResult r = run_stepsim("report --no-waterfall -q" + kSmall + " -o " + page);
  ASSERT_EQ(r.code, 0) << r.err;
  std::string html = slurp(page);
  // The timeline's rows become [7]: the script reads a row's events from a number and throws.
  const size_t from = html.find("\"timeline\":{");
  const size_t to = html.find(",\"waterfall\":", from);
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  html.replace(from, to - from, "\"timeline\":{\"rows\":[7],\"step_ns\":1,\"cats\":[],\"kinds\":[],\"classes\":[]}");
  const std::string broken = dir.file("broken.html");
  std::ofstream(broken, std::ios::binary) << html;
  const auto browser = stepsim::test::load_in_chromium(broken);
  ASSERT_TRUE(browser.ran);
  EXPECT_EQ(html_tag(browser.dom), "<html lang=\"en\" data-errors=\"1\"") << browser.dom.substr(0, 2000);
  EXPECT_EQ(body_tag(browser.dom), "<body");  // the script stopped before marking what it drew
  EXPECT_NE(browser.dom.find("This page hit an error while drawing"), std::string::npos);
}

TEST(ReportCli, UserTextIsEscaped) {
  const stepsim::test::ScratchDir dir;
  const std::string page = dir.file("r.html");
  const CliResult r =
      run_stepsim("report --no-waterfall -q" + kSmall + " --set 'model.name=<img src=x onerror=alert(1)></script>' -o " + page);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = slurp(page);
  EXPECT_EQ(html.find("<img src=x"), std::string::npos);
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;&lt;/script&gt;"), std::string::npos);
  // The page's data block holds no '<' at all (so no "</script>" can end it early).
  const size_t data = html.find("id=\"stepsim-data\">");
  const size_t end = html.find("</script>", data);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(html.substr(data, end - data).find('<'), std::string::npos);
  EXPECT_EQ(external_reference(html), "");
  // The command that reproduces the page is there, quoted for a shell and escaped for HTML.
  EXPECT_NE(html.find("&#39;model.name=&lt;img"), std::string::npos);
}

TEST(ReportCli, OutputPathIsCheckedBeforeAnyReplay) {
  const stepsim::test::ScratchDir dir;
  const CliResult r = run_stepsim("report" + kSmall + " -o " + dir.file("missing/r.html"));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("-o"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("waterfall replay"), std::string::npos) << r.err;
  const CliResult none = run_stepsim("report" + kSmall);
  EXPECT_EQ(none.code, 2) << none.err;
  EXPECT_NE(none.err.find("-o"), std::string::npos) << none.err;
}

TEST(ReportCli, SameInputsGiveTheSameBytes) {
  const stepsim::test::ScratchDir dir;
  const std::string a = dir.file("a.html"), b = dir.file("b.html");
  ASSERT_EQ(run_stepsim("report --no-waterfall -q" + kSmall + " -o " + a).code, 0);
  ASSERT_EQ(run_stepsim("report --no-waterfall -q" + kSmall + " -o " + b).code, 0);
  std::string x = slurp(a), y = slurp(b);
  // The command line names its own output file; the rest must be identical.
  const auto without_command = [](std::string s) {
    const size_t a = s.find("<pre>cd "), b = s.find("</pre>", a);
    return a == std::string::npos || b == std::string::npos ? s : s.erase(a, b - a);
  };
  EXPECT_EQ(without_command(x), without_command(y));
}

// With a straggler the replay runs the EP groups holding it, not replica 0: the page draws those
// GPUs' timeline, memory and layers (every one of the three was empty: "GPUs none (0 ops)").
TEST(ReportCli, AStragglersPageDrawsTheGpusItsReplayRuns) {
  const stepsim::test::ScratchDir dir;
  const std::string page = dir.file("r.html");
  const CliResult r = run_stepsim("report workloads/llama-3.1-8b.yaml --no-waterfall -q "
                                  "--set 'scenario.stragglers=[{gpu: 5, clock: 0.8}]' -o " + page);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = slurp(page);
  const size_t open = html.find("id=\"stepsim-data\">") + 18;
  const auto data = nlohmann::json::parse(html.substr(open, html.find("</script>", open) - open));
  std::set<int64_t> gpus;
  size_t blocks = 0;
  for (const auto& row : data["timeline"]["rows"]) {
    gpus.insert(row["gpu"].get<int64_t>());
    blocks += row["ev"].size() / 8;
  }
  EXPECT_EQ(gpus, (std::set<int64_t>{5, 21, 37, 53}));
  EXPECT_GT(blocks, 1000u);
  ASSERT_TRUE(data["memory"].is_object());
  EXPECT_EQ(data["memory"]["series"].size(), 4u);
  ASSERT_TRUE(data["layers"].is_object());
  EXPECT_EQ(data["layers"]["rows"].size(), 33u);  // 32 layers and "outside layers"
  EXPECT_NE(html.find("GPUs 5, 21, 37, 53 ("), std::string::npos);
}

}  // namespace
