// The files one command reads and writes, so that no output replaces an input or another output
// (`import megatron run.sh -o run.sh`, `report cfg.yaml -o cfg.yaml`, `platform -o p --png p`).
// While a CommandFiles scope is alive (stepsim's main holds one around each command), every input
// read through input_file.hpp and every output checked or written through output_file.hpp is
// recorded, and a clash is refused with a ConfigError before anything is written, whichever of the
// two came first. Files are compared by identity (device and inode, so hard links, symbolic links
// and `./x` vs `x` all match); an output that does not exist yet by its resolved path. Devices and
// FIFOs (/dev/null, a pipe) are shared freely. Outside a scope nothing is recorded (in-process
// callers such as tests or the Python module open their own scope per command). The record is the
// calling thread's: commands run at once on several threads never see each other's files.
#pragma once

#include <string>

namespace stepsim::io {

class CommandFiles {
 public:
  CommandFiles();   // starts with no file recorded
  ~CommandFiles();  // forgets them
  CommandFiles(const CommandFiles&) = delete;
  CommandFiles& operator=(const CommandFiles&) = delete;
};

// An input just opened (`fd`, a regular file) under `path`, named `what` in messages ("config",
// "model.config_json"). Throws when an output of this command is the same file.
void note_input(int fd, const std::string& path, const std::string& what);

// `path` will be written by `option` ("-o", "--png"). Throws when it is an input of this command,
// or another option's output. The same option may claim its path more than once (checked first,
// written later).
void claim_output(const std::string& path, const std::string& option);

// `path` was written and renamed into place: reading it back later is no clash.
void output_written(const std::string& path);

// The command read `path` to write it again (a resumed sweep's manifest): no longer an input.
void forget_input(const std::string& path);

}  // namespace stepsim::io
