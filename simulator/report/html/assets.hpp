// The HTML report's stylesheet and scripts, compiled in from simulator/report/html/*.{css,js}
// (CMakeLists.txt embeds them as text at build time: the page needs no file beside the binary).
#pragma once

namespace stepsim::html_assets {

extern const char* const kReportCss;    // report.css
extern const char* const kReportJs;     // report.js: draws the charts from the page's JSON
extern const char* const kErrorTrapJs;  // error_trap.js: runs first, shows and counts any error

}  // namespace stepsim::html_assets
