#include "vocabulary/op_sink.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace stepsim::ops {
namespace {

template <class T>
void drop_prefix(std::vector<T>& v, size_t& head) {
  // Erasing costs O(pending); doing it only when the consumed part is the larger half keeps the
  // amortised cost per op constant.
  if (head >= 256 && head * 2 >= v.size()) {
    v.erase(v.begin(), v.begin() + std::ptrdiff_t(head));
    head = 0;
  }
}

uint16_t count16(size_t n, const char* what) {
  if (n > std::numeric_limits<uint16_t>::max())
    throw std::invalid_argument(std::string("op has too many ") + what + " (max 65535)");
  return uint16_t(n);
}

}  // namespace

void StreamQueue::compact() {
  drop_prefix(ops, op_head);
  drop_prefix(deps, dep_head);
  drop_prefix(flows, flow_head);
}

StreamQueue& OpSink::queue(int stream) {
  if (stream < 0 || stream >= int(streams_.size()))
    throw std::invalid_argument("op on stream " + std::to_string(stream) + ", but the workload declares " +
                                std::to_string(streams_.size()) + " streams");
  return streams_[size_t(stream)];
}

void OpSink::add_deps(StreamQueue& q, Op& op, std::span<const OpRef> deps) {
  op.n_deps = count16(deps.size(), "dependencies");
  q.deps.insert(q.deps.end(), deps.begin(), deps.end());
}

OpRef OpSink::compute(const Tag& tag, Work work, std::span<const OpRef> deps) {
  StreamQueue& q = queue(kComputeStream);
  if (!(work.amount >= 0)) throw std::invalid_argument("compute op with negative or NaN work");
  Op op;
  op.tag = tag;
  op.tag.comm_class = CommClass::None;
  switch (work.unit) {
    case Work::Unit::Fp8Flops: op.work_flops = work.amount; break;
    case Work::Unit::Bf16Flops: op.work_flops = work.amount * (fp8_ / bf16_); break;
    case Work::Unit::Seconds: op.work_flops = work.amount * fp8_; break;
  }
  add_deps(q, op, deps);
  q.ops.push_back(op);
  return OpRef(gpu_, kComputeStream, q.emitted++);
}

OpRef OpSink::comm(int stream, const Tag& tag, std::span<const FlowSpec> out, std::span<const FlowSpec> in,
                   std::span<const OpRef> deps, double setup_s) {
  if (stream == kComputeStream) throw std::invalid_argument("communication op on the compute stream");
  if (!(setup_s >= 0)) throw std::invalid_argument("communication op with negative or NaN setup time");
  StreamQueue& q = queue(stream);
  Op op;
  op.tag = tag;
  op.tag.comm_class = comm_class(tag.kind);
  op.comm = true;
  op.setup_s = setup_s;
  op.n_out = count16(out.size(), "outgoing flows");
  op.n_in = count16(in.size(), "incoming flows");
  if (comm_class_info(size_t(op.tag.comm_class)).copy_engine && op.n_out + op.n_in > 0)
    throw std::invalid_argument("a copy-engine op moves no data over the network: it lasts its setup time");
  for (const FlowSpec& f : out) {
    if (f.peer == gpu_) throw std::invalid_argument("flow from a GPU to itself");
    if (!(f.bytes >= 0)) throw std::invalid_argument("flow with negative or NaN bytes");
  }
  for (const FlowSpec& f : in)
    if (f.peer == gpu_) throw std::invalid_argument("flow from a GPU to itself");
  q.flows.insert(q.flows.end(), out.begin(), out.end());
  q.flows.insert(q.flows.end(), in.begin(), in.end());
  add_deps(q, op, deps);
  q.ops.push_back(op);
  return OpRef(gpu_, uint32_t(stream), q.emitted++);
}

}  // namespace stepsim::ops
