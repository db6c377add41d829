#include "simulator/io/profile_trace.hpp"

#include <new>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <istream>
#include <streambuf>
#include <cstdio>
#include <memory>
#include <limits>
#include <set>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "vocabulary/config_error.hpp"
#include "simulator/io/input_file.hpp"

namespace stepsim::traces {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

bool is_ep(const std::string& l) { return has(l, "deepep") || has(l, "deep_ep") || has(l, "dpsk::ep::"); }

// What the reader keeps of one event while it streams past.
struct Event {
  std::string name, cat, ph;
  double ts = 0, dur = 0;
  double tid = -1, stream = -1;
  int64_t correlation = -1;
  bool has_ts = false, has_dur = false, has_correlation = false;
  bool bad_ts = false, bad_dur = false;  // present but not a number
};

// Kept events beyond this (about 2 GiB of memory) mean the file is not one capture.
constexpr size_t kMaxKeptEvents = 20'000'000;
// Timestamps are microseconds since the epoch (1.7e15 in 2025); none reaches 10^18 (31,000 years).
constexpr double kMaxMicroseconds = 1e18;

struct Kernel {
  double ts = 0, dur = 0;
  double stream = -1;
  int64_t correlation = -1;
  std::string cls;
  bool comm = false;
};

struct Annotation {
  double begin = 0, end = 0;
  char phase = 'F';
  std::string name;
};

// SAX handler: keeps kernels, launch times by correlation id and phase annotations; skips the
// rest (args beyond correlation/stream, device properties, CPU ops) without building a tree.
class TraceSax {
 public:
  std::vector<Kernel> kernels;
  std::unordered_map<int64_t, double> launch_ts;  // correlation -> CPU launch time (us)
  std::vector<Annotation> annotations;
  std::string error;

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(int64_t v) { return number(double(v), v); }
  bool number_unsigned(uint64_t v) {
    return number(double(v), v > uint64_t(std::numeric_limits<int64_t>::max()) ? -1 : int64_t(v));
  }
  // A float id (correlation) outside int64 is no id: -1 (converting it would be undefined).
  bool number_float(double v, const std::string&) {
    return number(v, std::isfinite(v) && std::abs(v) < 9.2e18 ? int64_t(v) : -1);
  }
  bool binary(nlohmann::json::binary_t&) { return true; }
  bool string(std::string& s) {
    if (role() == Role::Event) {
      if (key_ == "name") ev_.name = s;
      else if (key_ == "cat") ev_.cat = s;
      else if (key_ == "ph") ev_.ph = s;
      else if (key_ == "ts") ev_.bad_ts = true;
      else if (key_ == "dur") ev_.bad_dur = true;
    }
    return true;
  }
  bool key(std::string& k) {
    key_ = k;
    return true;
  }
  bool start_object(std::size_t) {
    Role r = Role::Other;
    if (stack_.empty()) r = Role::Root;
    else if (role() == Role::Events) r = Role::Event;
    else if (role() == Role::Event && key_ == "args") r = Role::Args;
    if (r == Role::Event) ev_ = Event{};
    stack_.push_back(r);
    return true;
  }
  bool end_object() {
    if (role() == Role::Event) {
      ++events_;
      if (!finish_event()) return false;
    }
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    // Chrome traces are {"traceEvents": [...], ...} or a bare array of events.
    const bool events = stack_.empty() || (role() == Role::Root && key_ == "traceEvents");
    stack_.push_back(events ? Role::Events : Role::Other);
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) {
    error = ex.what();
    std::replace(error.begin(), error.end(), '\n', ' ');
    return false;
  }

 private:
  enum class Role { Root, Events, Event, Args, Other };
  Role role() const { return stack_.empty() ? Role::Other : stack_.back(); }

  bool number(double v, int64_t i) {
    if (role() == Role::Event) {
      if (key_ == "ts") {
        ev_.ts = v;
        ev_.has_ts = true;
      } else if (key_ == "dur") {
        ev_.dur = v;
        ev_.has_dur = true;
      } else if (key_ == "tid") {
        ev_.tid = v;
      }
    } else if (role() == Role::Args) {
      if (key_ == "correlation") {
        ev_.correlation = i;
        ev_.has_correlation = true;
      } else if (key_ == "stream") {
        ev_.stream = v;
      }
    }
    return true;
  }

  // Keeps the event if it is one of ours; false (with `error` set) when a kept event is broken.
  bool finish_event() {
    if (ev_.ph != "X") return true;
    const std::string cat = lower(ev_.cat);
    const bool kernel = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
    const bool launch = cat == "cuda_runtime" || cat == "cuda_driver" || cat == "runtime";
    const bool annotation = cat == "user_annotation";
    if (!kernel && !launch && !annotation) return true;
    const std::string what = "event " + std::to_string(events_) + " (" + ev_.cat + " \"" + ev_.name.substr(0, 60) + "\")";
    if (!ev_.has_ts || ev_.bad_ts || !std::isfinite(ev_.ts) || ev_.ts < 0 || ev_.ts > kMaxMicroseconds)
      return reject(what + ": ts must be a number of microseconds >= 0");
    if ((kernel || annotation) &&
        (!ev_.has_dur || ev_.bad_dur || !std::isfinite(ev_.dur) || ev_.dur < 0 || ev_.dur > kMaxMicroseconds))
      return reject(what + ": dur must be a number of microseconds >= 0");
    if (kernels.size() + annotations.size() + launch_ts.size() >= kMaxKeptEvents)
      return reject("more than " + std::to_string(kMaxKeptEvents) +
                    " kernel, launch and annotation events (more would exhaust memory); pass one capture");
    if (kernel) {
      Kernel k;
      k.ts = ev_.ts;
      k.dur = ev_.dur;
      k.stream = ev_.stream >= 0 ? ev_.stream : ev_.tid;
      k.correlation = ev_.has_correlation ? ev_.correlation : -1;
      k.cls = kernel_class(ev_.name);
      k.comm = is_comm_kernel(ev_.name);
      kernels.push_back(std::move(k));
    } else if (launch) {
      if (ev_.has_correlation) launch_ts[ev_.correlation] = ev_.ts;
    } else {
      // DeepSeek's phases: "attn(F)", "mlp(B)", "mlp(W)", "dispatch(F)", ...
      const std::string& n = ev_.name;
      if (n.size() >= 3 && n[n.size() - 3] == '(' && n.back() == ')' &&
          (n[n.size() - 2] == 'F' || n[n.size() - 2] == 'B' || n[n.size() - 2] == 'W'))
        annotations.push_back({ev_.ts, ev_.ts + ev_.dur, n[n.size() - 2], n});
    }
    return true;
  }
  bool reject(const std::string& why) {
    error = why;
    return false;
  }

  int64_t events_ = 0;
  std::vector<Role> stack_;
  std::string key_;
  Event ev_;
};

// Innermost phase annotation around time t: annotations sorted by begin, max_end[i] the latest
// end among the first i+1, so the backward walk stops as soon as nothing earlier can enclose t.
int64_t enclosing(const std::vector<Annotation>& a, const std::vector<double>& max_end, double t) {
  auto it = std::upper_bound(a.begin(), a.end(), t, [](double v, const Annotation& x) { return v < x.begin; });
  int64_t best = -1;
  // Real captures nest a handful of ranges; a crafted trace of millions of ranges all spanning t
  // would make this walk quadratic, so it looks at the nearest 4096 only.
  int64_t steps = 0;
  for (int64_t i = int64_t(it - a.begin()) - 1; i >= 0 && max_end[size_t(i)] >= t && steps++ < 4096; --i) {
    const Annotation& x = a[size_t(i)];
    if (x.end >= t && (best < 0 || x.end - x.begin < a[size_t(best)].end - a[size_t(best)].begin)) best = i;
  }
  return best;
}

}  // namespace

bool is_comm_kernel(const std::string& kernel_name) {
  const std::string l = lower(kernel_name);
  return is_ep(l) || has(l, "nccl");
}

std::string kernel_class(const std::string& kernel_name) {
  const std::string l = lower(kernel_name);
  if (has(l, "nccl")) return "other";  // a collective: communication, but no EP class
  if (is_ep(l)) {
    if (has(l, "notify") || has(l, "layout")) return "ep_notify";
    if (has(l, "dispatch")) return "ep_dispatch";
    if (has(l, "combine")) return "ep_combine";
    return "other";
  }
  // DeepSeek's FP8 GEMMs: m_grouped = routed experts, dptp128c_acc = weight gradients (FP32
  // accumulate), ptp128c = the rest (MLA projections, shared expert).
  if (has(l, "m_grouped")) return "gemm_moe_fp8";
  if (has(l, "dptp128c") || has(l, "wgrad")) return "gemm_wgrad_fp8";
  if (has(l, "ptp128c")) return "gemm_dense_fp8";
  if (has(l, "flash") || has(l, "attn") || has(l, "fmha") || has(l, "attention")) return "attention";
  if (has(l, "layer_norm") || has(l, "layernorm") || has(l, "rmsnorm") || has(l, "ln_fwd") || has(l, "ln_bwd"))
    return "norm";
  // ATen kernels name their functors after types ("LoadWithCast"): elementwise, whatever they say.
  if (has(l, "at::native::") || has(l, "aten")) return "elementwise";
  if (has(l, "cast") || has(l, "quant") || has(l, "transpose")) return "cast";
  if (has(l, "gemm") || has(l, "cublas") || has(l, "nvjet") || has(l, "xmma") || has(l, "cutlass"))
    return has(l, "fp8") || has(l, "e4m3") ? "gemm_dense_fp8" : "gemm_bf16";
  for (const char* p : {"elementwise", "reduce", "copy", "memcpy", "memset", "topk", "rotary", "scatter", "gather",
                        "fill", "expand", "mapping", "count", "index", "unique", "aux_fi", "permute", "softmax", "sort",
                        "swiglu", "silu", "gelu"})
    if (has(l, p)) return "elementwise";
  return "other";
}

namespace {

// A gzipped trace (.json.gz, as the PyTorch profiler can write) streamed through zlib.
class GzStreambuf : public std::streambuf {
 public:
  explicit GzStreambuf(gzFile f) : f_(f) {}
  std::string error;

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const int n = gzread(f_, buf_, sizeof buf_);
    if (n < 0) {
      int code = 0;
      error = gzerror(f_, &code);
      return traits_type::eof();
    }
    if (n == 0) return traits_type::eof();
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  gzFile f_;
  char buf_[1 << 16];
};

}  // namespace

ProfileSummary read_profile_trace(const std::string& path) {
  // A FILE* streams through a small buffer (much faster than an istream adapter); nothing but
  // the kept events is ever held. The file must be a regular file (not a FIFO or /dev/zero).
  const int fd = io::open_input_file(path, "profiler trace");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(::fdopen(fd, "rb"), &std::fclose);
  if (!in) {
    ::close(fd);
    throw ConfigError(path + ": profiler trace: cannot read; check the path");
  }
  const int c0 = std::fgetc(in.get());
  const int c1 = c0 == EOF ? EOF : std::fgetc(in.get());
  const bool gzipped = c0 == 0x1f && c1 == 0x8b;
  TraceSax sax;
  bool ok = false;
  std::string io_error;
  try {
    if (gzipped) {
      const int gz_fd = ::dup(::fileno(in.get()));
      if (gz_fd < 0 || ::lseek(gz_fd, 0, SEEK_SET) != 0) throw ConfigError(path + ": profiler trace: cannot read");
      std::unique_ptr<gzFile_s, int (*)(gzFile)> gz(gzdopen(gz_fd, "rb"), &gzclose);
      if (!gz) {
        ::close(gz_fd);
        throw ConfigError(path + ": profiler trace: cannot open the gzip stream");
      }
      GzStreambuf buf(gz.get());
      std::istream stream(&buf);
      ok = nlohmann::json::sax_parse(stream, &sax);
      io_error = buf.error;
    } else {
      // Back to the start (ungetc guarantees only one character of push-back).
      if (std::fseek(in.get(), 0, SEEK_SET) != 0) throw ConfigError(path + ": profiler trace: cannot read");
      ok = nlohmann::json::sax_parse(in.get(), &sax);
    }
  } catch (const ConfigError&) {
    throw;
  } catch (const std::bad_alloc&) {  // a single value (a name of hundreds of MB) past this machine's memory
    sax.error = "a value in it is too large for this machine's memory";
  } catch (const std::exception& e) {
    sax.error = e.what();
  }
  if (!io_error.empty()) sax.error = "gzip: " + io_error;
  std::replace(sax.error.begin(), sax.error.end(), '\n', ' ');
  if (!ok || !sax.error.empty())
    throw ConfigError(path + ": not a valid Chrome trace JSON (" + (sax.error.empty() ? "unreadable" : sax.error) +
                      "); pass a PyTorch profiler trace (.json or .json.gz)");
  if (sax.kernels.empty())
    throw ConfigError(path + ": no GPU kernel events (\"cat\": \"kernel\") in its traceEvents; record the trace with "
                             "CUDA activity on");

  ProfileSummary s;
  s.path = path;
  auto& ann = sax.annotations;
  s.annotations = int64_t(ann.size());
  std::sort(ann.begin(), ann.end(), [](const Annotation& a, const Annotation& b) { return a.begin < b.begin; });
  std::vector<double> max_end(ann.size());
  std::map<std::string, int64_t> repeats;
  for (size_t i = 0; i < ann.size(); ++i) {
    max_end[i] = std::max(ann[i].end, i > 0 ? max_end[i - 1] : ann[i].end);
    s.layers = std::max(s.layers, ++repeats[ann[i].name]);
  }
  s.layers = std::max<int64_t>(s.layers, 1);  // no phase ranges: the capture is one unit

  // "F", "comm_B", ...; "other" / "comm_other" outside every phase range.
  const auto phase_name = [&ann](int64_t a, bool comm) {
    return std::string(comm ? "comm_" : "") + (a >= 0 ? std::string(1, ann[size_t(a)].phase) : "other");
  };
  std::set<double> comm_streams;
  for (const Kernel& k : sax.kernels)
    if (k.comm) comm_streams.insert(k.stream);

  // Wall span per (annotation instance, comm?): first kernel start to last kernel end.
  std::map<std::pair<int64_t, bool>, std::pair<double, double>> spans;
  double first = std::numeric_limits<double>::infinity(), last = -first;
  for (const Kernel& k : sax.kernels) {
    const bool comm = comm_streams.count(k.stream) > 0;
    int64_t a = -1;
    if (k.correlation >= 0) {
      const auto it = sax.launch_ts.find(k.correlation);
      if (it != sax.launch_ts.end()) a = enclosing(ann, max_end, it->second);
    }
    const std::string phase = phase_name(a, comm);
    const double sec = k.dur * 1e-6;
    s.phase_class_s[phase][k.cls] += sec;
    s.phase_s[phase] += sec;
    ++s.kernels;
    if (k.cls == "other") ++s.unknown_kernels;
    auto [it, fresh] = spans.try_emplace({a, comm}, k.ts, k.ts + k.dur);
    if (!fresh) {
      it->second.first = std::min(it->second.first, k.ts);
      it->second.second = std::max(it->second.second, k.ts + k.dur);
    }
    first = std::min(first, k.ts);
    last = std::max(last, k.ts + k.dur);
  }
  for (const auto& [key, span] : spans) {
    const auto [a, comm] = key;
    s.phase_span_s[phase_name(a, comm)] += (span.second - span.first) * 1e-6;
  }
  s.capture_span_s = (last - first) * 1e-6;
  return s;
}

}  // namespace stepsim::traces
