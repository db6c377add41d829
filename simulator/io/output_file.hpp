// Every file stepsim writes goes through here: the content goes to a temporary file next to the
// target and is renamed over it only once complete, so a failure (bad input found late, a full
// disk) never leaves the target empty or half-written, and a write error is an error, not exit 0.
// Devices and FIFOs (/dev/null, /dev/stdout, a pipe) are written directly; a symlink is followed
// and its target replaced.
#pragma once

#include <fstream>
#include <string>

namespace stepsim::io {

class OutputFile {
 public:
  // `option` names where the path came from in messages ("-o", "--trace"). Throws ConfigError when
  // the folder is missing or not writable, or the path is a directory.
  OutputFile(const std::string& path, const std::string& option);
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return out_; }
  // Flushes, checks every write succeeded and renames the file into place; throws ConfigError.
  void commit();

 private:
  std::string path_, option_, target_, temp_;
  std::ofstream out_;
  bool committed_ = false;
};

// Throws the ConfigError OutputFile would for `path` (empty, a directory, a folder that is missing or
// not writable) without creating anything: for outputs written after minutes of work, checked first.
void check_output_path(const std::string& path, const std::string& option);

// The whole content at once.
void write_output_file(const std::string& path, const std::string& option, const std::string& content);

// Flushes stdout; throws ConfigError when the report could not be written (a full disk, /dev/full).
void finish_stdout();

}  // namespace stepsim::io
