#include "workloads/model/model_streams.hpp"

#include <algorithm>

#include "vocabulary/id_counter.hpp"

namespace stepsim {

ModelStreams::ModelStreams(int32_t pipeline_channels, bool host_copies) {
  ops::IdCounter<int> s;
  compute = s.take();
  ep = s.take();
  // The first four pipeline channels' sends, then their receives; the others' after the rest.
  const int first = std::min(4, pipeline_channels);
  pp_send = s.take(first);
  pp_recv = s.take(first);
  dp_gather = s.take();
  dp_reduce = s.take();
  tp = s.take();
  cp = s.take();
  for (int32_t c = first; c < pipeline_channels; ++c) {
    pp_send.push_back(s.take());
    pp_recv.push_back(s.take());
  }
  if (host_copies) host_copy = s.take();
  count = s.count();

  ops::IdCounter<uint8_t> ch;
  pp_channel = ch.take(pipeline_channels);
  ep_channel = ch.take();
  dp_gather_channel = ch.take();
  dp_reduce_channel = ch.take();
  tp_channel = ch.take();
  cp_channel = ch.take();
  dp_allreduce_channel = ch.take();
}

}  // namespace stepsim
