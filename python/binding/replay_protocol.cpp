#include "python/binding/replay_protocol.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>

#include "vocabulary/config_error.hpp"

namespace stepsim::python {
namespace {

void put(std::string& out, const std::string& s) {
  const uint64_t size = s.size();
  out.append(reinterpret_cast<const char*>(&size), sizeof size);
  out += s;
}

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  std::string next() {
    uint64_t size = 0;
    if (bytes_.size() - at_ < sizeof size) throw std::runtime_error("replay request cut short");
    std::memcpy(&size, bytes_.data() + at_, sizeof size);
    at_ += sizeof size;
    if (bytes_.size() - at_ < size) throw std::runtime_error("replay request cut short");
    std::string s = bytes_.substr(at_, size);
    at_ += size;
    return s;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  const std::string& bytes_;
  size_t at_ = 0;
};

void write_all(int fd, const char* data, size_t size) {
  for (size_t at = 0; at < size;) {
    const ssize_t n = ::write(fd, data + at, size - at);
    if (n > 0)
      at += size_t(n);
    else if (n == 0 || errno != EINTR)
      return;
  }
}

}  // namespace

std::string encode(const ReplayRequest& r) {
  std::string out;
  put(out, r.from_file ? "file" : "text");
  put(out, r.text);
  put(out, r.path);
  put(out, r.base_dir);
  put(out, std::to_string(r.overrides.size()));
  for (const std::string& o : r.overrides) put(out, o);
  put(out, r.trace_path);
  put(out, r.trace_target);
  put(out, r.trace_ranks);
  put(out, r.trace_window);
  put(out, std::string(1, r.print_progress ? '1' : '0') + (r.relay_progress ? '1' : '0'));
  return out;
}

ReplayRequest decode(const std::string& bytes) {
  Reader in(bytes);
  ReplayRequest r;
  r.from_file = in.next() == "file";
  r.text = in.next();
  r.path = in.next();
  r.base_dir = in.next();
  const std::string count = in.next();
  if (count.empty() || count.size() > 9 || count.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error("replay request: bad override count");
  for (size_t i = 0, n = std::stoul(count); i < n; ++i) r.overrides.push_back(in.next());
  r.trace_path = in.next();
  r.trace_target = in.next();
  r.trace_ranks = in.next();
  r.trace_window = in.next();
  const std::string flags = in.next();
  if (flags.size() != 2 || !in.done()) throw std::runtime_error("replay request: bad flags");
  r.print_progress = flags[0] == '1';
  r.relay_progress = flags[1] == '1';
  return r;
}

void send_frame(int fd, char kind, const std::string& payload) {
  char header[9];
  header[0] = kind;
  const uint64_t size = payload.size();
  std::memcpy(header + 1, &size, sizeof size);
  write_all(fd, header, sizeof header);
  write_all(fd, payload.data(), payload.size());
}

void send_progress(int fd, const engine::ProgressUpdate& update) {
  send_frame(fd, 'p', std::string(reinterpret_cast<const char*>(&update), sizeof update));
}

void reply(int fd, const std::function<std::string()>& work) {
  char kind = 'o';
  std::string payload;
  try {
    payload = work();
  } catch (const ConfigError& e) {
    kind = 'c';
    payload = e.what();
  } catch (const std::bad_alloc&) {
    kind = 'm';
  } catch (const std::exception& e) {
    kind = 'e';
    payload = e.what();
  } catch (...) {
    kind = 'e';
    payload = "unknown error";
  }
  send_frame(fd, kind, payload);
}

}  // namespace stepsim::python
