// What a sweep directory holds, so `--collect DIR` can rebuild the table without the original
// command line: DIR/sweep.json (this manifest), DIR/points/NNN.json (each point's simulate --json)
// and NNN.err (its stderr), DIR/sweep.csv and DIR/sweep.png.
#pragma once

#include <string>
#include <vector>

#include "simulator/sweep/grid.hpp"

namespace stepsim::sweep {

struct Manifest {
  std::string binary;             // the stepsim that runs each point
  std::string config;             // absolute path of the config
  std::vector<std::string> sets;  // --set overrides shared by every point
  std::vector<GridAxis> axes;
  std::string plot_x;               // empty: the first grid key
  std::vector<std::string> plot_y;  // empty: step_time_s
  std::string png;                  // empty: DIR/sweep.png
  std::string title;                // empty: the config's file name and the --set values
};

std::string manifest_path(const std::string& dir);
std::string point_json_path(const std::string& dir, int index, int points);
std::string point_err_path(const std::string& dir, int index, int points);

// A sweep directory belongs to one manifest. Throws ConfigError (naming -o) when DIR holds another
// sweep -- a sweep.json with another config, --set values or grid, or one that is not a manifest --
// or point files with no manifest: their points would be collected under this grid's labels. The
// same sweep again (a rerun, or --emit-jobs written anew) may reuse its directory. Nothing is
// deleted: the old points may be hours of cluster time, and removing them is the user's call.
void claim_sweep_dir(const std::string& dir, const Manifest& m);

// Creates DIR/points and writes DIR/sweep.json; ConfigError when the directory cannot be written.
void write_manifest(const std::string& dir, const Manifest& m);
// ConfigError naming the file when it is missing or not a sweep manifest.
Manifest read_manifest(const std::string& dir);

// The simulate command line of one point, as argv (for the local runner).
std::vector<std::string> point_argv(const Manifest& m, const GridPoint& p);
// The folder --emit-jobs's lines return to: the current one, so a relative path a point names (a
// file a --set or --grid value names, one the config leaves to the current directory) means what it
// meant here, whichever folder a cluster task starts in. ConfigError when it cannot be read.
std::string job_folder();
// The same as one shell line (for --emit-jobs, sweep's and search's): `cd FOLDER && ` the command,
// its output redirected into the sweep directory DIR (absolute). Every word is quoted, so nothing in
// a path or value is run by the shell; ConfigError when one, FOLDER or DIR holds a line break (a
// per-line runner would run the rest as a second command).
std::string point_shell_line(const Manifest& m, const GridPoint& p, const std::string& folder, const std::string& dir,
                             int points);

}  // namespace stepsim::sweep
