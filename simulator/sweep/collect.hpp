// Turns a sweep directory's point files into DIR/sweep.csv and DIR/sweep.png. The local runner
// and `--collect` (after a cluster ran the emitted jobs) share it, so both give the same files.
#pragma once

#include <string>
#include <vector>

#include "simulator/sweep/manifest.hpp"
#include "simulator/sweep/process_pool.hpp"
#include "simulator/sweep/sweep_table.hpp"

namespace stepsim::sweep {

// One point's outcome from its files: the report if points/NNN.json holds a simulate report that
// ran with this point's settings -- the manifest's config, its --set values and the point's grid
// values, as the report records them -- (and the run, when `status` is given, exited 0), else the
// error: the last line the point wrote to stderr, what is missing, or which settings the report
// ran with instead (a point of another sweep is never relabelled as this one's).
PointOutcome read_point(const std::string& dir, const Manifest& m, const GridPoint& p, int points,
                        const JobStatus* status = nullptr);

struct CollectSummary {
  int points = 0, failed = 0;
  int out_of_memory = 0;  // successful points whose plan does not fit in GPU memory
  std::string fastest;    // "schedule=dualpipev (7.664 s)": the fastest point that fits; empty if none
  bool plotted = false;
  std::string csv, png;  // the files written (png empty when nothing was drawn)
};

// `statuses`: one per point from a local run, or empty (collect). Writes sweep.csv, then sweep.png
// (skipped, with a note on stderr, when no point succeeded). Throws ConfigError for a bad plot
// field after the CSV is written.
CollectSummary collect(const std::string& dir, const Manifest& m, const std::vector<JobStatus>& statuses = {});

}  // namespace stepsim::sweep
