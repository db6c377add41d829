// `stepsim report`: one self-contained HTML page of a simulated step (no fonts, scripts, styles
// or images from anywhere else: it opens offline and can be mailed). It shows the plan, the step
// against its roofline, MFU and tokens/s, per-GPU compute / exposed communication / bubble, a
// zoomable timeline of the recorded GPUs, memory over time against capacity, where each layer's
// time goes, the speed-of-light-to-plan waterfall when one was computed, and the command that
// reproduces the page. A formatter: it runs nothing (the CLI runs the replays and passes results).
// Every text that comes from the user (names, paths, the command line) is escaped; the charts'
// data sit in one JSON block that the page's own script draws.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "simulator/calibration/explain.hpp"
#include "vocabulary/plan.hpp"
#include "simulator/engine/sim_result.hpp"
#include "simulator/roofline/roofline.hpp"

namespace stepsim {

struct HtmlReportInput {
  const Plan* plan = nullptr;
  const SimResult* result = nullptr;  // replayed with record_spans for the timeline, memory and layers
  const Roofline* roofline = nullptr;  // null for the synthetic workload (nothing to roofline)
  const calib::Explanation* waterfall = nullptr;  // null: no waterfall (waterfall_note says why)
  std::string waterfall_note;
  std::vector<int32_t> timeline_gpus;  // the GPUs whose spans were recorded
  std::string command;                 // the exact command line that reproduces the page
  std::string version;                 // "stepsim 0.1.0"
};

// The most timeline blocks the page holds: beyond it, at a resolution doubled until they fit,
// neighbouring ops of one kind on one row are drawn as one block and ops closer than the
// resolution to a block's start join it as a mixed block (its time kept per kind), and the page
// says so.
inline constexpr size_t kMaxTimelineBlocks = 60000;
// Memory samples kept per GPU: beyond it each point is the highest level within its slice of the step.
inline constexpr size_t kMaxMemoryPoints = 1500;

void write_html_report(const HtmlReportInput& in, std::ostream& out);

// Text for an HTML element or attribute: & < > " ' escaped, bytes that are not UTF-8 and control
// characters made printable (io::printable).
std::string html_escape(const std::string& s);

}  // namespace stepsim
