// Loads a page in headless Chromium (Debian's `chromium` package, which scripts/setup.sh installs)
// and returns its DOM once the scripts have run, with whatever the page wrote to the console. The
// HTML report's first script (simulator/report/html/error_trap.js) counts every uncaught
// exception, failed resource and console.error on <html data-errors="N"> and shows it on the page,
// so the DOM alone tells whether the page drew cleanly; the console log is a second witness.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli_runner.hpp"
#include "tests/scratch_dir.hpp"

namespace stepsim::test {

struct BrowserResult {
  bool ran = false;     // chromium started and exited 0
  std::string dom;      // document.documentElement.outerHTML after load
  std::string console;  // the lines Chromium logged from the page's console (CONSOLE)
};

inline BrowserResult load_in_chromium(const std::string& html_path) {
  static int calls = 0;
  const ScratchDir profile;  // a fresh profile per page: nothing cached, nothing shared
  const std::string log = profile.file("chromium-" + std::to_string(calls++) + ".log");
  // No network features: the page must need none. The virtual time budget lets timers settle.
  const std::string cmd =
      "timeout 180 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update --disable-sync --disable-extensions "
      "--user-data-dir='" + profile.file("profile") + "' --enable-logging=stderr --v=0 --virtual-time-budget=5000 "
      "--window-size=1280,900 --dump-dom 'file://" + html_path + "' 2>'" + log + "'";
  BrowserResult r;
  CliResult run = run_shell(cmd);
  r.dom = std::move(run.out);
  r.ran = run.code == 0;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.find("CONSOLE") != std::string::npos) r.console += line + "\n";
  if (!r.ran) {
    std::ifstream again(log);
    std::stringstream ss;
    ss << again.rdbuf();
    ADD_FAILURE() << "headless chromium did not run (is Debian's chromium installed? scripts/setup.sh installs it): "
                  << ss.str().substr(0, 2000);
  }
  return r;
}

}  // namespace stepsim::test
