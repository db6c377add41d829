#include "simulator/sweep/manifest.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "simulator/config/config_error.hpp"

namespace stepsim::sweep {
namespace {

// Single-quoted for POSIX sh when it holds anything but plainly safe characters; ' becomes '\''.
std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-@%") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

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
  std::ofstream out(manifest_path(dir));
  if (!(out << j.dump(2) << "\n")) throw ConfigError(manifest_path(dir) + ": cannot write the sweep manifest; check -o");
}

Manifest read_manifest(const std::string& dir) {
  const std::string path = manifest_path(dir);
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot read the sweep manifest; --collect needs the -o DIR of a sweep made with --emit-jobs");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    const auto j = nlohmann::json::parse(ss.str());
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
    return m;
  } catch (const std::exception& e) {
    throw ConfigError(path + ": not a sweep manifest (" + e.what() + "); rerun stepsim sweep --emit-jobs to write it");
  }
}

std::vector<std::string> point_argv(const Manifest& m, const GridPoint& p) {
  std::vector<std::string> argv = {m.binary, "simulate", m.config};
  for (const auto& s : m.sets) argv.insert(argv.end(), {"--set", s});
  for (const auto& s : p.overrides()) argv.insert(argv.end(), {"--set", s});
  argv.insert(argv.end(), {"--json", "--quiet"});
  return argv;
}

std::string point_shell_line(const Manifest& m, const GridPoint& p, const std::string& dir, int points) {
  std::string line;
  for (const auto& a : point_argv(m, p)) line += (line.empty() ? "" : " ") + shell_quote(a);
  return line + " > " + shell_quote(point_json_path(dir, p.index, points)) + " 2> " +
         shell_quote(point_err_path(dir, p.index, points));
}

}  // namespace stepsim::sweep
