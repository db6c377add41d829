// stepsim._core: the compiled half of the Python module (python/stepsim/ holds the public API).
// It binds what the command line runs and adds no logic: plans load through simulator/config/,
// imports through simulator/importers/, reports are the command line's JSON
// (simulator/report/command_json.hpp) and a replay runs in a process of its own
// (replay_process.hpp, replay_main.cpp).
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "python/binding/replay_process.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/config/config_tree.hpp"
#include "simulator/importers/exporters.hpp"
#include "simulator/importers/import_file.hpp"
#include "simulator/io/command_files.hpp"
#include "simulator/io/input_file.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/io/output_file.hpp"
#include "simulator/report/command_json.hpp"
#include "traces/trace_selection.hpp"
#include "vocabulary/config_error.hpp"
#include "vocabulary/plan_names.hpp"

namespace py = pybind11;

namespace stepsim::python {
namespace {

// `-` as a trace: no stdout of a Python call could carry it.
constexpr io::Dash kDashTrace{"a Python call writes its trace to a file"};

// `stepsim simulate --json`: the arguments checked and the trace's temporary file opened here (so
// that a bad path fails at once, and this process alone removes the file if the call does not
// finish), the rest in a replay process (replay_main.cpp) that loads the same plan again from the
// same inputs, renamed into place once the replay says the trace is whole.
std::string simulate_json(const Plan& plan, const std::string& program, const std::string& cwd, bool from_file,
                          const std::string& text, const std::string& path, const std::string& base_dir,
                          const std::vector<std::string>& overrides, const std::string& trace_path,
                          const std::string& trace_ranks, const std::string& trace_window, bool print_progress,
                          const py::object& progress) {
  if (trace_path.empty() && !(trace_ranks.empty() && trace_window.empty()))
    throw ConfigError("trace_ranks / trace_window choose what the trace holds; give trace='FILE.json' too");
  const io::CommandFiles files;  // this call's own, as each command's (command_files.hpp)
  (void)trace_options(plan, trace_ranks, trace_window);  // their errors before any file is touched
  std::optional<io::OutputFile> trace;
  if (!trace_path.empty()) trace.emplace(trace_path, "trace", kDashTrace);
  ReplayRequest request;
  request.from_file = from_file;
  request.text = text;
  request.path = path;
  request.base_dir = base_dir;
  request.overrides = overrides;
  request.trace_path = trace ? trace->writing_path() : "";
  // The replay runs in the folder the plan was loaded in: it checks the trace against the plan's
  // files there, by the path this call meant.
  if (trace) {
    std::error_code ec;
    const std::filesystem::path target = std::filesystem::absolute(trace_path, ec);
    request.trace_target = ec ? trace_path : target.string();
  }
  request.trace_ranks = trace_ranks;
  request.trace_window = trace_window;
  request.print_progress = print_progress;
  request.relay_progress = !progress.is_none();
  const auto known = [](double v) { return v < 0 ? py::object(py::none()) : py::object(py::float_(v)); };
  std::string json = run_replay(program, cwd, request, [&](const engine::ProgressUpdate& u) {
    progress(u.simulated_s, u.ops_done, known(u.share), known(u.eta_s), u.wall_s);
  });
  if (trace) trace->commit();
  return json;
}

// A config file: the plan, and the text it was read from (the replay loads the plan again from it,
// so a file edited after loading does not change the plan).
std::pair<Plan, py::bytes> load_file(const std::string& path, const std::vector<std::string>& overrides) {
  const io::CommandFiles files;
  std::string text = io::read_input_file(path, "config", io::kMiB);
  Plan plan = load_plan_text(text, path, overrides);
  return {std::move(plan), py::bytes(text)};
}

// `stepsim import TOOL FILE` without -o: the commented plan (absolute paths), checked to load, and
// the notes the command line prints on stderr.
std::pair<std::string, std::vector<std::string>> import_yaml(const std::string& tool, const std::string& path,
                                                             const std::string& gpus, const std::string& gpus_per_node,
                                                             const std::string& hardware) {
  const io::CommandFiles files;
  importers::check_import_tool(tool);
  const importers::ImportedPlan plan =
      importers::import_file(tool, path, importers::import_options(gpus, gpus_per_node, hardware, {"gpus", "gpus_per_node", "hardware"}));
  const std::string yaml = importers::plan_yaml(plan, "");
  importers::check_imported_plan(plan, yaml, "");
  std::vector<std::string> notes = plan.notes;
  if (std::string n = importers::not_imported_note(plan); !n.empty()) notes.push_back(std::move(n));
  return {yaml, notes};
}

}  // namespace
}  // namespace stepsim::python

PYBIND11_MODULE(_core, m) {
  using namespace stepsim;
  m.doc() = "stepsim's compiled core; use the stepsim package, not this module";
  m.attr("version") = STEPSIM_VERSION;

  // One line of valid UTF-8 whatever bytes a message holds (paths and values are user text).
  static py::exception<ConfigError> config_error(m, "ConfigError", PyExc_ValueError);
  static py::exception<python::SimulationFailure> simulation_error(m, "SimulationError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      config_error(io::printable(e.what()).c_str());
    } catch (const python::SimulationFailure& e) {
      simulation_error(io::printable(e.what()).c_str());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError, "out of memory; the plan is too large for this machine (fewer GPUs, layers or "
                                         "microbatches, or sim.mode=auto)");
    } catch (const std::exception& e) {
      PyErr_SetString(PyExc_RuntimeError, ("stepsim: internal error: " + io::printable(e.what())).c_str());
    }
  });

  py::class_<Plan>(m, "PlanHandle", "A validated plan (stepsim.Plan wraps it).")
      .def_readonly("source", &Plan::source)
      .def_readonly("overrides", &Plan::overrides)
      .def_readonly("notes", &Plan::notes)
      .def_property_readonly("gpus", &Plan::gpus)
      .def_property_readonly("dp", &Plan::dp)
      .def_property_readonly("nodes", [](const Plan& p) { return p.cluster.nodes; })
      .def_property_readonly("gpus_per_node", [](const Plan& p) { return p.cluster.gpus_per_node; })
      .def_property_readonly("model_name", [](const Plan& p) { return p.model.name; })
      .def_property_readonly("hardware_name", [](const Plan& p) { return p.hardware.name; })
      .def_property_readonly("memory_GiB", [](const Plan& p) { return p.hardware.memory_GiB; })
      .def_property_readonly("tp", [](const Plan& p) { return p.parallel.tp; })
      .def_property_readonly("pp", [](const Plan& p) { return p.parallel.pp; })
      .def_property_readonly("cp", [](const Plan& p) { return p.parallel.cp; })
      .def_property_readonly("ep", [](const Plan& p) { return p.parallel.ep; })
      .def_property_readonly("zero", [](const Plan& p) { return p.parallel.zero; })
      .def_property_readonly("microbatches", [](const Plan& p) { return p.parallel.microbatches; })
      .def_property_readonly("sequences_per_microbatch", &Plan::sequences_per_microbatch)
      .def_property_readonly("schedule", [](const Plan& p) { return std::string(to_string(p.parallel.schedule)); })
      .def_property_readonly("global_batch", [](const Plan& p) { return p.train.global_batch; })
      .def_property_readonly("seq_len", [](const Plan& p) { return p.train.seq_len; })
      .def_property_readonly("tokens_per_step", [](const Plan& p) { return p.train.tokens_per_step(); });

  m.def("default_config_path", &default_config_path, "The default config (DeepSeek-V3 on 2048 H800s).");
  m.def("load_file", &python::load_file, py::arg("path"), py::arg("overrides"),
        "A config file with --set-style overrides (\"key=value\", the value YAML): (plan, the file's text).");
  m.def(
      "load_file_text",
      [](const std::string& text, const std::string& path, const std::vector<std::string>& overrides) {
        const io::CommandFiles files;
        return load_plan_text(text, path, overrides);
      },
      py::arg("text"), py::arg("path"), py::arg("overrides"), "The config file `path` from the text it held when first loaded.");
  m.def(
      "load_text",
      [](const std::string& text, const std::string& source, const std::vector<std::string>& overrides,
         const std::string& base_dir) {
        const io::CommandFiles files;
        return load_plan_from_string(text, source, overrides, base_dir);
      },
      py::arg("text"), py::arg("source"), py::arg("overrides"), py::arg("base_dir"),
      "A config's YAML text; `source` names it in messages.");
  m.def(
      "roofline_json", [](const Plan& plan) { return io::json_text(roofline_command_json(plan)); }, py::arg("plan"),
      "`stepsim roofline --json` as text.");
  m.def("simulate_json", &python::simulate_json, py::arg("plan"), py::arg("program"), py::arg("cwd"),
        py::arg("from_file"), py::arg("text"), py::arg("path"), py::arg("base_dir"), py::arg("overrides"),
        py::arg("trace"), py::arg("trace_ranks"), py::arg("trace_window"), py::arg("print_progress"),
        py::arg("progress"), "`stepsim simulate --json` as text; the replay runs in its own process (`program`).");
  m.def("import_yaml", &python::import_yaml, py::arg("tool"), py::arg("path"), py::arg("gpus"),
        py::arg("gpus_per_node"), py::arg("hardware"), "`stepsim import TOOL FILE`: (plan YAML, notes).");
  m.def(
      "export_text",
      [](const Plan& plan, const std::string& tool) {
        const io::CommandFiles files;
        importers::check_export_tool(tool);
        return importers::export_plan(tool, plan);
      },
      py::arg("plan"), py::arg("tool"), "`stepsim export TOOL PLAN.yaml` without -o: the job's text, checked by importing it back.");
  m.def(
      "config_json",
      [](const std::string& text, const std::string& path) {
        const io::CommandFiles files;
        return io::json_text(config_tree(path, text, {}), 2) + "\n";
      },
      py::arg("text"), py::arg("path"),
      "A config's YAML text as JSON (which YAML reads) with its relative paths made absolute against `path`'s folder.");
  m.def("cli_program", [] { return std::string(STEPSIM_CLI); }, "The stepsim command-line program this module was built with.");
  m.def("interrupt_all", &python::interrupt_all, "Stops every replay running in this process (KeyboardInterrupt).");
}
