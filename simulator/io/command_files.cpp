#include "simulator/io/command_files.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <unordered_map>
#include <vector>

#include "vocabulary/config_error.hpp"

namespace stepsim::io {
namespace {

namespace fs = std::filesystem;

struct Identity {
  bool exists = false;  // a regular file is there
  dev_t dev = 0;
  ino_t ino = 0;
  bool same(const Identity& o) const { return exists && o.exists && dev == o.dev && ino == o.ino; }
};

Identity identity(const struct stat& st) { return {true, st.st_dev, st.st_ino}; }

// The path with every symbolic link of the part that exists resolved (the file a write creates).
std::string resolved(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) p = fs::absolute(path, ec).lexically_normal();
  return p.string();
}

struct Input {
  Identity id;
  std::string path, what;
};
struct Output {
  Identity id;
  std::string resolved, path, option;
  bool written = false;
};

struct Files {
  int scopes = 0;
  std::vector<Input> inputs;  // a few
  std::vector<Output> outputs;  // a sweep's may be thousands: found by path and by identity
  std::unordered_map<std::string, size_t> output_at;
  std::map<std::pair<dev_t, ino_t>, size_t> output_of;
  void clear() {
    inputs.clear(), outputs.clear(), output_at.clear(), output_of.clear();
  }
  const Output* output(const Identity& id, const std::string& where) const {
    if (const auto it = output_at.find(where); it != output_at.end()) return &outputs[it->second];
    if (!id.exists) return nullptr;
    const auto it = output_of.find({id.dev, id.ino});
    return it == output_of.end() ? nullptr : &outputs[it->second];
  }
};
// One record per thread: a command runs on one thread, and calls made at once on several threads
// (the Python module's, from a thread pool) are separate commands, none refused for another's files.
Files& files() {
  thread_local Files f;
  return f;
}

}  // namespace

CommandFiles::CommandFiles() {
  Files& f = files();
  if (f.scopes++ == 0) f.clear();
}

CommandFiles::~CommandFiles() {
  Files& f = files();
  if (--f.scopes == 0) f.clear();
}

void note_input(int fd, const std::string& path, const std::string& what) {
  Files& f = files();
  if (f.scopes == 0) return;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
  const Identity id = identity(st);
  const std::string where = resolved(path);
  if (const Output* o = f.output(id, where); o != nullptr && !o->written)
    throw ConfigError(path + ": " + what + " is also the output of " + o->option +
                      "; writing it would destroy that input, so name another file for " + o->option);
  f.inputs.push_back({id, path, what});
}

void claim_output(const std::string& path, const std::string& option) {
  Files& f = files();
  if (f.scopes == 0) return;
  Identity id;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return;  // a device, FIFO or directory: shared, or refused elsewhere
    id = identity(st);
  }
  const std::string where = resolved(path);
  for (const Input& in : f.inputs)
    if (in.id.same(id))
      throw ConfigError(path + ": " + option + " is also an input of this command (" + in.what + ", " + in.path +
                        "); writing it would destroy that input, so name another file for " + option);
  if (const Output* o = f.output(id, where)) {
    if (o->option == option) return;  // checked before, written now
    throw ConfigError(path + ": named by both " + o->option + " and " + option + "; give each its own file");
  }
  f.output_at[where] = f.outputs.size();
  if (id.exists) f.output_of[{id.dev, id.ino}] = f.outputs.size();
  f.outputs.push_back({id, where, path, option});
}

void output_written(const std::string& path) {
  Files& f = files();
  if (const auto it = f.output_at.find(resolved(path)); it != f.output_at.end()) f.outputs[it->second].written = true;
}

void forget_input(const std::string& path) {
  Files& f = files();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  const Identity id = identity(st);
  std::erase_if(f.inputs, [&](const Input& in) { return in.id.same(id); });
}

}  // namespace stepsim::io
