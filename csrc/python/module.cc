// torchair_ge._C: the engine seen from Python. Conversions only; no logic lives here.
#include <pybind11/stl.h>

#include "devices/cpu/cpu_device.h"
#include "devices/cpu/kernels/boxed_call.h"
#include "devices/cpu/kernels/kernel_choice.h"
#include "ge/base/logging.h"
#include "ge/base/version.h"
#include "ge/passes/pass_manager.h"
#include "ge/serialize/file_io.h"
#include "python/py_utils.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "torchair_ge engine bindings";
  pybind11::register_exception<ge::python::GeError>(m, "GeError", PyExc_RuntimeError);
  ge::cpu::RegisterCpuDevice();
  ge::python::BindTypes(m);
  ge::python::BindBuilder(m);
  ge::python::BindSession(m);
  ge::python::BindSymbolic(m);
  m.def(
      "set_log_level",
      [](const std::string& level) {
        const auto parsed = ge::ParseLogLevel(level, static_cast<ge::LogLevel>(-1));
        if (static_cast<int>(parsed) < 0) throw ge::python::GeError("unknown log level '" + level + "'");
        ge::SetLogLevel(parsed);
      },
      pybind11::arg("level"), "Sets the engine's log level: DEBUG, INFO, WARNING, ERROR, OFF or EVENT.");
  m.def("safe_file_name", &ge::SafeFileName, pybind11::arg("name"),
        "The file name the engine gives a node's dumps (unsafe characters replaced by '_').");
  m.def(
      "engine_version", [] { return std::string(ge::kEngineVersion); },
      "The engine's version, recorded in model files.");
  m.def("optimizer_passes", &ge::OptimizerPassNames, "Names of the graph optimizer's passes, in pipeline order.");
  m.def("collective_namespaces", &ge::cpu::CollectiveNamespaces,
        "torch.distributed's operator namespaces, which the engine refuses to run (their work is asynchronous).");
  m.def(
      "cpu_kernel_choices",
      [] {
        pybind11::list out;
        for (const ge::cpu::KernelChoice& c : ge::cpu::KernelChoices()) {
          pybind11::dict times;
          for (size_t i = 0; i < c.names.size(); ++i) times[pybind11::str(c.names[i])] = c.best_us[i];
          out.append(pybind11::dict(pybind11::arg("key") = c.key, pybind11::arg("best_us") = times,
                                    pybind11::arg("winner") = c.names[static_cast<size_t>(c.winner)],
                                    pybind11::arg("measure_us") = c.measure_us,
                                    pybind11::arg("from_disk") = c.from_disk));
        }
        return out;
      },
      "The CPU kernels chosen by measurement in this process (matrix products: MKL or oneDNN), in order: "
      "the shape key, each candidate's best time in us, the winner, what deciding cost, and whether an "
      "earlier process on this kind of CPU had decided it (from_disk: nothing timed).");
  m.def("log_level", [] {
    static const char* kNames[] = {"DEBUG", "INFO", "WARNING", "ERROR", "OFF", "EVENT"};
    return std::string(kNames[static_cast<int>(ge::CurrentLogLevel())]);
  });
}
