#include "traces/chrome_trace.hpp"

#include "simulator/io/json_text.hpp"
#include "traces/memory_counters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "traces/trace_event_stream.hpp"

namespace stepsim {

using ops::OpKind;
using ops::Phase;

const char* trace_kind(OpKind k) { return k < OpKind::Count_ ? ops::info(k).trace_kind : "?"; }

const char* trace_stream_label(OpKind k) { return k < OpKind::Count_ ? ops::info(k).stream : "comm"; }

namespace {

// F, B or W from the tag's phase, else from a whole-chunk kind; "" for collectives.
std::string phase_letter(const ops::Tag& t) {
  switch (t.phase) {
    case Phase::Forward: return "F";
    case Phase::Backward: return "B";
    case Phase::Weight: return "W";
    case Phase::None: break;
  }
  return t.kind < OpKind::Count_ ? ops::info(t.kind).chunk_pass : "";
}

// What a compute op holds, for its name: "attn", "moe-mlp", "dense-mlp", "head", ...
const char* compute_what(OpKind k) { return k < OpKind::Count_ ? ops::info(k).what : "chunk"; }

std::string idle_name(uint8_t classes) {
  if (classes == 0) return "bubble";
  std::string s = "exposed: ";
  bool first = true;
  for (size_t c = 1; c < ops::kCommClasses; ++c)
    if (classes & (1u << c)) {
      if (!first) s += '+';
      s += ops::comm_class_info(c).name;
      first = false;
    }
  return s;
}

std::string index_or_null(uint16_t v) { return v == ops::kNoIndex ? "null" : std::to_string(v); }

struct Track {
  int64_t pid = 0, tid = 0;
};

}  // namespace

std::string trace_event_name(const ops::Tag& t) {
  std::string name;
  const std::string ph = phase_letter(t);
  if (ops::is_comm_kind(t.kind)) {
    name = trace_kind(t.kind);
    if (!ph.empty()) name += " " + ph;
  } else {
    name = ph.empty() ? compute_what(t.kind) : ph + " " + compute_what(t.kind);
    if (t.kind < OpKind::Count_ && *ops::info(t.kind).chunk_pass != '\0')  // a whole pipeline chunk
      name = ph + fmt::format(" c{}", t.chunk);
  }
  if (t.layer != ops::kNoIndex) name += fmt::format(" L{}", t.layer);
  if (t.microbatch != ops::kNoIndex) name += fmt::format(" mb{}", t.microbatch);
  if (t.half) name += fmt::format(" half{}", t.half);
  // tp_comm_overlap's pieces of a TP block: beside the ring exchange, the middle, beside the splits;
  // then an attention part's pieces around CP's exchanges: before the core, the core (p2p: beside
  // the ring), p2p's last step, after the core.
  static constexpr const char* pieces[] = {"", " ub-ag", " ub-mid", " ub-rs", " cp-pre", " cp-core", " cp-last", " cp-post"};
  if (t.piece > 0 && t.piece < std::size(pieces)) name += pieces[t.piece];
  return name;
}

void write_chrome_trace(const SimResult& result, const TraceOptions& opt, std::ostream& out) {
  const int64_t gpn = std::max<int64_t>(1, opt.gpus_per_node);
  const std::set<int32_t> wanted(opt.ranks.begin(), opt.ranks.end());
  const auto rank_wanted = [&](int32_t r) { return wanted.empty() || wanted.count(r) > 0; };
  const auto in_window = [&](double a, double b) { return b >= opt.window_begin_s && a <= opt.window_end_s; };
  const auto track = [&](int32_t rank, int stream) {
    return Track{rank / gpn, (rank % gpn) * 256 + stream};
  };

  // What the file holds, for whoever opens it later (names from the config: escaped by nlohmann).
  nlohmann::json other = {{"workload", result.workload},
                          {"schedule", result.schedule},
                          {"mode", result.mode},
                          {"step_time_s", result.step_time_s},
                          {"ranks", opt.ranks},
                          {"window_s", {opt.window_begin_s, nullptr}}};
  if (!std::isinf(opt.window_end_s)) other["window_s"][1] = opt.window_end_s;
  TraceEventStream ev(out, io::json_text(other));

  // Name the processes (nodes) and threads (GPU streams) the written events use.
  std::map<std::pair<int32_t, int>, std::set<std::string>> streams;
  for (const Span& s : result.spans) {
    if (!rank_wanted(s.rank)) continue;
    auto& labels = streams[{s.rank, s.stream}];
    if (s.stream != 0) labels.insert(trace_stream_label(s.tag.kind));
  }
  for (const IdleSpan& s : result.idle_spans)
    if (rank_wanted(s.rank)) streams[{s.rank, 0}];
  std::set<int64_t> nodes;
  for (const auto& [key, labels] : streams) {
    const auto [rank, stream] = key;
    const Track t = track(rank, stream);
    if (nodes.insert(t.pid).second) {
      ev.event(fmt::format(R"({{"ph":"M","name":"process_name","ts":0,"pid":{},"tid":0,"args":{{"name":"node {}"}}}})",
                           t.pid, t.pid));
      ev.event(fmt::format(R"({{"ph":"M","name":"process_sort_index","ts":0,"pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
                           t.pid, t.pid));
    }
    std::string label = "compute";
    if (stream != 0) {
      label = fmt::format("s{}", stream);
      for (const std::string& l : labels) label += " " + l;
    }
    ev.event(fmt::format(R"({{"ph":"M","name":"thread_name","ts":0,"pid":{},"tid":{},"args":{{"name":"GPU {} {}"}}}})",
                         t.pid, t.tid, rank, label));
    ev.event(fmt::format(R"({{"ph":"M","name":"thread_sort_index","ts":0,"pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
                         t.pid, t.tid, t.tid));
  }

  // Ops. Times go through integer nanoseconds so consecutive ops on a stream never overlap.
  struct Written {
    int64_t start_ns, end_ns;
    Track track;
  };
  std::unordered_map<uint64_t, Written> written;  // (rank, stream, seq) -> where the op went
  const auto key = [](int32_t rank, int stream, uint32_t seq) {
    return uint64_t(uint32_t(rank)) << 40 | uint64_t(stream) << 32 | seq;
  };

  for (const Span& s : result.spans) {
    if (!rank_wanted(s.rank) || !in_window(s.start_s, s.end_s)) continue;
    const Track t = track(s.rank, s.stream);
    const int64_t a = trace_ns(s.start_s), b = trace_ns(s.end_s);
    const ops::Tag& g = s.tag;
    std::string args = fmt::format(R"("kind":"{}","op":"{}","phase":"{}","layer":{},"microbatch":{},"chunk":{})",
                                   trace_kind(g.kind), ops::to_string(g.kind), phase_letter(g),
                                   index_or_null(g.layer), index_or_null(g.microbatch), int(g.chunk));
    if (g.half) args += fmt::format(R"(,"half":{})", int(g.half));
    if (g.piece) args += fmt::format(R"(,"{}":{})", g.piece < 4 ? "ub_piece" : "cp_piece", int(g.piece));
    if (g.microbatch2 != ops::kNoIndex)
      args += fmt::format(R"(,"overlaps_microbatch":{},"overlaps_chunk":{})", g.microbatch2, int(g.chunk2));
    if (s.stream == 0)
      args += fmt::format(R"(,"flops_fp8":{:.6g})", s.flops);
    else
      args += fmt::format(R"(,"bytes_out":{:.6g},"bytes_in":{:.6g})", s.bytes_out, s.bytes_in);
    ev.event(fmt::format(R"({{"ph":"X","name":"{}","cat":"{}","ts":{},"dur":{},"pid":{},"tid":{},"args":{{{}}}}})",
                         trace_event_name(g), s.stream == 0 ? "compute" : "comm", trace_us(a), trace_us(b - a), t.pid,
                         t.tid, args));
    written.emplace(key(s.rank, s.stream, s.seq), Written{a, b, t});
  }

  // Idle time on the compute track: the report's bubble / exposed-communication split.
  for (const IdleSpan& s : result.idle_spans) {
    if (!rank_wanted(s.rank) || !in_window(s.start_s, s.end_s)) continue;
    const Track t = track(s.rank, 0);
    const int64_t a = trace_ns(s.start_s), b = trace_ns(s.end_s);
    if (b <= a) continue;
    ev.event(fmt::format(R"({{"ph":"X","name":"{}","cat":"idle","ts":{},"dur":{},"pid":{},"tid":{},"args":{{"kind":"{}"}}}})",
                         idle_name(s.exposed_classes), trace_us(a), trace_us(b - a), t.pid, t.tid,
                         s.exposed_classes == 0 ? "bubble" : "exposed-comm"));
  }

  // Flow arrows, transfer -> the op that needed it. Each end sits strictly inside its
  // event (1 ns in), where viewers bind it; ops shorter than 2 ns get no arrow.
  uint64_t id = 0;
  for (const SpanEdge& e : result.span_edges) {
    const auto from = written.find(key(e.rank, e.from_stream, e.from_seq));
    const auto to = written.find(key(e.rank, e.to_stream, e.to_seq));
    if (from == written.end() || to == written.end()) continue;
    const Written& f = from->second;
    const Written& c = to->second;
    if (f.end_ns - f.start_ns < 2 || c.end_ns - c.start_ns < 2) continue;
    ++id;
    ev.event(fmt::format(R"({{"ph":"s","name":"data","cat":"flow","id":{},"ts":{},"pid":{},"tid":{}}})", id,
                         trace_us(f.end_ns - 1), f.track.pid, f.track.tid));
    ev.event(fmt::format(R"({{"ph":"f","bp":"e","name":"data","cat":"flow","id":{},"ts":{},"pid":{},"tid":{}}})", id,
                         trace_us(c.start_ns + 1), c.track.pid, c.track.tid));
  }
  write_memory_counters(result, opt, ev);  // traces/memory_counters.cpp
  ev.close();
}

}  // namespace stepsim
