// Every file stepsim writes goes through here: the content goes to a temporary file next to the
// target and is renamed over it only once complete, so a failure (bad input found late, a full
// disk) never leaves the target empty or half-written, and a write error is an error, not exit 0.
// Devices and FIFOs (/dev/null, /dev/stdout, a pipe) are written directly; a symlink is followed
// link by link and its target replaced (a link to a file not there yet creates it, where its folder
// exists; a loop is refused). An output that is one of the command's inputs or another option's
// output is refused (command_files.hpp).
#pragma once

#include <fstream>
#include <string>

namespace stepsim::io {

// What an output path of `-` means (a file named - is written as ./-): standard output where the
// output is text and the command prints nothing else there; otherwise a one-line refusal saying why.
struct Dash {
  const char* refusal = nullptr;  // null: standard output
};
inline constexpr Dash kDashIsStdout{};
inline constexpr Dash kDashBinary{"the output is binary"};
inline constexpr Dash kDashStdoutTaken{"stdout carries the command's report"};

class OutputFile {
 public:
  // `option` names where the path came from in messages ("-o", "--trace"). Throws ConfigError when
  // the folder is missing or not writable, the path is a directory, an input of the command or
  // another option's output, or `-` where `dash` refuses it.
  OutputFile(const std::string& path, const std::string& option, Dash dash);
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return *out_; }
  // Where the content goes until commit (the temporary file; the target itself when that is a
  // device or FIFO), for another process that writes it (the Python module's replay).
  const std::string& writing_path() const { return temp_.empty() ? target_ : temp_; }
  // Flushes, checks every write succeeded and renames the file into place; throws ConfigError.
  void commit();

 private:
  std::string path_, option_, target_, temp_;
  std::ofstream file_;
  std::ostream* out_ = &file_;  // standard output for `-`
  bool committed_ = false;
};

// Throws the ConfigError OutputFile would for `path` without creating anything: for outputs
// written after minutes of work, checked first.
void check_output_path(const std::string& path, const std::string& option, Dash dash);

// The whole content at once.
void write_output_file(const std::string& path, const std::string& option, Dash dash, const std::string& content);

// Whether `path` names standard output (`-`): for messages ("wrote the page to stdout").
inline bool is_stdout(const std::string& path) { return path == "-"; }

// Flushes stdout; throws ConfigError when the report could not be written (a full disk, /dev/full).
void finish_stdout();

}  // namespace stepsim::io
