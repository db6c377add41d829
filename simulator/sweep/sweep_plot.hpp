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
// fields have more than two units. Points whose plan does not fit in memory carry the flag to the
// chart (Series::out_of_memory: hollow, labelled OOM). Fields whose name contains "share" are ratios and are drawn in
// percent; fields of a second unit (e.g. seconds beside a share) get the right-hand axis; a field's
// simulation (solid) and roofline (dashed) lines share a colour. The x axis is log2 when the x
// values are positive and span at least 1:8 (microbatch counts 1, 2, 4, 8; or 16 to 240); a grid key
// whose values are not all numbers (e.g. schedule) is drawn as categories in grid order.
// Whether every successful point's value of `x_key` is a number.
bool numeric_x(const SweepTable& table, const std::string& x_key);

// The default chart title, from the grid actually swept: the plan's model, GPUs, PP, EP and
// schedule where every successful point shares them (a field the grid varies is left out, never
// named after one point), "by" the grid keys, then the shared --set values while they fit on one
// line: "DeepSeek-V3, 2048 GPUs, PP 8, EP 64, by schedule; train.global_batch=16384".
std::string default_title(const SweepTable& table, const std::vector<GridAxis>& axes,
                          const std::vector<std::string>& sets);

// A field's unit, from its name: "%" for shares (drawn in percent), else its unit suffix ("s",
// "bytes", "flops", "GBps"), else "" (a ratio or a count).
std::string unit_of(const std::string& field);

// Throws ConfigError when the --plot-y fields have more than two units (a chart has two y axes):
// checked before any point runs, and again when the chart is drawn.
void check_plot_units(const std::vector<std::string>& y_fields);

// Whether row `row` is a plan that did not fit in GPU memory (its report's memory.fits is false).
bool out_of_memory(const SweepTable& table, size_t row);

// The successful point with the shortest step_time_s among those that fit in memory (an
// out-of-memory point is never the best): its row, or -1 when no point qualifies.
int fastest_fitting_row(const SweepTable& table);

plot::LineChart sweep_chart(const SweepTable& table, const std::vector<GridAxis>& axes, const std::string& x_key,
                            const std::vector<std::string>& y_fields, const std::string& title);

}  // namespace stepsim::sweep
