// torchair_ge._C: the engine seen from Python. Conversions only; no logic lives here.
#include <pybind11/stl.h>

#include "devices/cpu/cpu_device.h"
#include "devices/cpu/kernels/boxed_call.h"
#include "ge/base/logging.h"
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
  m.def("optimizer_passes", &ge::OptimizerPassNames, "Names of the graph optimizer's passes, in pipeline order.");
  m.def("collective_namespaces", &ge::cpu::CollectiveNamespaces,
        "torch.distributed's operator namespaces, which the engine refuses to run (their work is asynchronous).");
  m.def("log_level", [] {
    static const char* kNames[] = {"DEBUG", "INFO", "WARNING", "ERROR", "OFF", "EVENT"};
    return std::string(kNames[static_cast<int>(ge::CurrentLogLevel())]);
  });
}
