#include "simulator/sweep/manifest.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/io/command_files.hpp"
#include "simulator/io/input_file.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/io/output_file.hpp"
#include "simulator/io/shell_quote.hpp"

namespace stepsim::sweep {
using io::shell_quote;

std::string manifest_path(const std::string& dir) { return dir + "/sweep.json"; }
std::string point_json_path(const std::string& dir, int index, int points) {
  return dir + "/points/" + point_name(index, points) + ".json";
}
std::string point_err_path(const std::string& dir, int index, int points) {
  return dir + "/points/" + point_name(index, points) + ".err";
}

void write_manifest(const std::string& dir, const Manifest& m) {
  std::error_code ec;
  std::filesystem::create_directories(dir + "/points", ec);
  if (ec) throw ConfigError(dir + ": cannot create the sweep directory (" + ec.message() + "); check -o");
  nlohmann::json j;
  j["binary"] = m.binary;
  j["config"] = m.config;
  j["sets"] = m.sets;
  j["grid"] = nlohmann::json::array();
  for (const auto& a : m.axes) j["grid"].push_back({{"key", a.key}, {"values", a.values}});
  j["plot_x"] = m.plot_x;
  j["plot_y"] = m.plot_y;
  j["png"] = m.png;
  j["title"] = m.title;
  io::write_output_file(manifest_path(dir), "-o", io::kDashIsStdout, io::json_text(j, 2) + "\n");  // inside -o DIR
}

void claim_sweep_dir(const std::string& dir, const Manifest& m) {
  std::error_code ec;
  const auto there = [&](const std::string& p) { return std::filesystem::exists(std::filesystem::symlink_status(p, ec)); };
  const std::string fix = "; use another -o, or remove " + dir + "/sweep.json and " + dir + "/points to replace it";
  if (there(manifest_path(dir))) {
    Manifest old;
    try {
      old = read_manifest(dir);
    } catch (const ConfigError&) {
      throw ConfigError("-o " + dir + ": holds a sweep.json that is not a readable sweep manifest" + fix);
    }
    io::forget_input(manifest_path(dir));  // read to be written again: the sweep resumes
    if (old.config == m.config && old.sets == m.sets && old.axes == m.axes) return;
    std::string grid;
    for (const auto& a : old.axes) {
      std::string values;
      for (const auto& v : a.values) values += (values.empty() ? "" : ",") + v;
      grid += (grid.empty() ? "" : " ") + a.key + "=" + values;
    }
    throw ConfigError("-o " + dir + ": holds another sweep (--grid " + io::shortened(grid, 120) + " on " +
                      io::shortened(old.config, 120) + "), whose points --collect would label as this one's" + fix);
  }
  const std::string points = dir + "/points";
  if (there(points) && std::filesystem::is_directory(points, ec) && !std::filesystem::is_empty(points, ec))
    throw ConfigError("-o " + dir + ": " + points + " holds point files but " + dir +
                      " has no sweep.json to say what they ran; use another -o, or remove " + points);
}

Manifest read_manifest(const std::string& dir) {
  const std::string path = manifest_path(dir);
  std::string text;
  try {
    text = io::read_input_file(path, "--collect", 16 * io::kMiB);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string(e.what()) + " (--collect needs the -o DIR of a sweep made with --emit-jobs)");
  }
  try {
    const auto j = nlohmann::json::parse(text);
    Manifest m;
    m.binary = j.at("binary").get<std::string>();
    m.config = j.at("config").get<std::string>();
    m.sets = j.at("sets").get<std::vector<std::string>>();
    for (const auto& a : j.at("grid")) m.axes.push_back({a.at("key").get<std::string>(), a.at("values").get<std::vector<std::string>>()});
    m.plot_x = j.value("plot_x", "");
    m.plot_y = j.value("plot_y", std::vector<std::string>{});
    m.png = j.value("png", "");
    m.title = j.value("title", "");
    if (m.axes.empty()) throw ConfigError("no grid");
    check_grid(m.axes);  // the same checks as a sweep's own --grid: a hand-edited file gets no further
    for (const auto& s : m.sets) check_override(s);
    return m;
  } catch (const std::exception& e) {
    std::string why = e.what();
    std::replace(why.begin(), why.end(), '\n', ' ');
    throw ConfigError(path + ": not a sweep manifest (" + why + "); rerun stepsim sweep --emit-jobs to write it");
  }
}

std::vector<std::string> point_argv(const Manifest& m, const GridPoint& p) {
  std::vector<std::string> argv = {m.binary, "simulate", m.config};
  for (const auto& s : m.sets) argv.insert(argv.end(), {"--set", s});
  for (const auto& s : p.overrides()) argv.insert(argv.end(), {"--set", s});
  argv.insert(argv.end(), {"--json", "--quiet"});
  return argv;
}

std::string job_folder() {
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  if (ec)
    throw ConfigError("--emit-jobs: the current folder cannot be read (" + ec.message() +
                      "), so a job line cannot return to it; run stepsim from another folder");
  return cwd;  // a line break in its name is refused with the lines (point_shell_line)
}

std::string point_shell_line(const Manifest& m, const GridPoint& p, const std::string& folder, const std::string& dir,
                             int points) {
  // One line per point: a per-line runner (GNU parallel, a Slurm array) would run a line break
  // inside a quoted word as a second command.
  if (folder.find_first_of("\n\r") != std::string::npos)
    throw ConfigError("--emit-jobs: the current folder's name holds a line break, which a job line (it returns there "
                      "first) cannot hold; run stepsim from another folder");
  if (dir.find_first_of("\n\r") != std::string::npos)
    throw ConfigError("-o: the sweep directory's name holds a line break; a job line cannot hold it");
  std::string command;
  for (const auto& a : point_argv(m, p)) {
    if (a.find_first_of("\n\r") != std::string::npos)
      throw ConfigError("--emit-jobs: \"" + a.substr(0, a.find_first_of("\n\r")) +
                        "...\" holds a line break, which a per-line job runner would split into two commands; "
                        "remove it");
    if (!command.empty()) command += ' ';
    command += shell_quote(a);
  }
  return io::cd_prefix(folder) + command + " > " + shell_quote(point_json_path(dir, p.index, points)) + " 2> " +
         shell_quote(point_err_path(dir, p.index, points));
}

}  // namespace stepsim::sweep
