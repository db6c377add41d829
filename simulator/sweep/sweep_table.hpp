// The sweep's table: one row per point, the grid values, an `error` column, then every scalar
// field of the point's `simulate --json` report flattened to dotted names. Every row has the same
// columns (the union over points, sorted), so a failed point or a plan without some field leaves
// empty cells instead of shifting columns.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "simulator/sweep/grid.hpp"

namespace stepsim::sweep {

// Scalars of `report` as dotted name -> text (numbers as JSON writes them, strings raw, null empty).
// Lists of strings (`sets`, `notes`) become one cell joined by "; "; other arrays are left out
// (per-rank rows belong in the point's JSON), and so are `config` (this machine's absolute path;
// the manifest holds it) and `sim.wall_s`: wall time
// differs run to run and would break the CSV's reproducibility.
std::map<std::string, std::string> flatten_report(const nlohmann::json& report);

struct PointOutcome {
  GridPoint point;
  std::map<std::string, std::string> fields;  // empty when the point failed
  std::string error;                          // empty when it succeeded
};

struct SweepTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;

  int column(const std::string& name) const;  // -1 when absent
};

// Grid keys first (a report field of the same name is dropped: the grid value is what was asked),
// then `error`, then the union of report fields in sorted order.
SweepTable build_table(const std::vector<GridAxis>& axes, const std::vector<PointOutcome>& outcomes);

// RFC 4180: a cell with a comma, quote or newline is quoted, quotes doubled; lines end in \n.
void write_csv(const SweepTable& table, std::ostream& out);

}  // namespace stepsim::sweep
