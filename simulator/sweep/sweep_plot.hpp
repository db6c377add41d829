// The sweep's chart: each chosen report field against one grid key, the simulation solid and the
// roofline's field of the same name (`roofline.FIELD`) dashed on the same axes. With more than one
// grid key, each combination of the other keys gets its own lines.
#pragma once

#include <string>
#include <vector>

#include "simulator/plot/chart.hpp"
#include "simulator/sweep/sweep_table.hpp"

namespace stepsim::sweep {

// Throws ConfigError when x is not a grid key or a y field is not a column of the table.
// Fields whose name contains "share" are ratios and are drawn in percent. The x axis is log2 when
// the x values are positive and span at least 1:8 (microbatch counts 1, 2, 4, 8; or 16 to 240).
// Whether every successful point's value of `x_key` is a number (a sweep over schedule names has
// nothing to draw a line along).
bool numeric_x(const SweepTable& table, const std::string& x_key);

plot::LineChart sweep_chart(const SweepTable& table, const std::vector<GridAxis>& axes, const std::string& x_key,
                            const std::vector<std::string>& y_fields, const std::string& title);

}  // namespace stepsim::sweep
