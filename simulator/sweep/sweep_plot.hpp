// The sweep's chart: each chosen report field against one grid key, the simulation solid and the
// roofline's field of the same name (`roofline.FIELD`) dashed on the same axes. With more than one
// grid key, each combination of the other keys gets its own lines.
#pragma once

#include <string>
#include <vector>

#include "simulator/plot/chart.hpp"
#include "simulator/sweep/sweep_table.hpp"

namespace stepsim::sweep {

// Throws ConfigError when x is not a grid key or a y field is not a column of the table, or the
// fields have more than two units. Fields whose name contains "share" are ratios and are drawn in
// percent; fields of a second unit (e.g. seconds beside a share) get the right-hand axis; a field's
// simulation (solid) and roofline (dashed) lines share a colour. The x axis is log2 when the x
// values are positive and span at least 1:8 (microbatch counts 1, 2, 4, 8; or 16 to 240); a grid key
// whose values are not all numbers (e.g. schedule) is drawn as categories in grid order.
// Whether every successful point's value of `x_key` is a number.
bool numeric_x(const SweepTable& table, const std::string& x_key);

// The default chart title: the plan of the first successful point ("DeepSeek-V3, 2048 GPUs, PP 8,
// EP 64, dualpipev"), then the shared --set values while they fit on one line.
std::string default_title(const SweepTable& table, const std::vector<std::string>& sets);

plot::LineChart sweep_chart(const SweepTable& table, const std::vector<GridAxis>& axes, const std::string& x_key,
                            const std::vector<std::string>& y_fields, const std::string& title);

}  // namespace stepsim::sweep
