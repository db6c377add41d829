// Where each layer's time goes, from the spans of a replay that recorded them
// (SimOptions::record_spans): per model layer, the compute of its ops by part (attention, MLP,
// experts, ...) and the exposed communication its ops waited for. An idle stretch of the compute
// stream that waited on communication is charged to the compute op that ran right after it (the op
// that needed the data), split evenly over the classes it waited on. Values are seconds per GPU
// holding the layer: the sum over the recorded GPUs that ran the layer's ops, over their number.
//
// Hook: the cost model's per-layer breakdown by op class (issue 20, branch cost-model) can fill
// this same table (its own part names, its own rows); the HTML report draws whatever parts it has.
#pragma once

#include <string>
#include <vector>

#include "simulator/engine/sim_result.hpp"

namespace stepsim {

struct LayerBreakdown {
  struct Part {
    std::string name;
    bool exposed = false;  // exposed communication (else compute)
  };
  struct Row {
    std::string label;  // "layer 12", or "outside layers" (LM head, embedding, optimizer, trailing collectives)
    int layer = -1;     // -1: outside layers
    int gpus = 0;       // recorded GPUs that ran the row's ops
    std::vector<double> seconds;  // per part, per GPU
  };
  std::vector<Part> parts;  // parts that are zero in every row are left out
  std::vector<Row> rows;    // layers in order, then the row outside layers when it holds anything
};

LayerBreakdown layer_breakdown(const SimResult& r);

}  // namespace stepsim
