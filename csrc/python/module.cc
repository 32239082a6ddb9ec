// torchair_ge._C: the engine seen from Python. Conversions only; no logic lives here.
#include <c10/util/Exception.h>
#include <pybind11/stl.h>

#include "devices/cpu/cpu_device.h"
#include "devices/cpu/kernels/boxed_call.h"
#include "devices/cpu/kernels/kernel_choice.h"
#include "ge/base/logging.h"
#include "ge/base/version.h"
#include "ge/passes/pass_manager.h"
#include "ge/passes/rewrite_rules.h"
#include "ge/base/options.h"
#include "ge/serialize/file_io.h"
#include "ge/serialize/trusted_dir.h"
#include "python/py_utils.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "torchair_ge engine bindings";
  static pybind11::exception<ge::python::GeError>& ge_error =
      pybind11::register_exception<ge::python::GeError>(m, "GeError", PyExc_RuntimeError);
  // The backstop at the boundary: engine code reports errors as Status, so a C++ exception that
  // gets here (std::out_of_range from a missed check) is a bug of ours; it still reaches Python
  // as a GeError that says so, not as an IndexError. pybind11's own exceptions (argument
  // conversion: TypeError) pass through.
  pybind11::register_local_exception_translator([](std::exception_ptr error) {
    try {
      std::rethrow_exception(error);
    } catch (const pybind11::builtin_exception&) {
      throw;
    } catch (const pybind11::error_already_set&) {
      throw;
    } catch (const ge::python::GeError&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;  // MemoryError
    } catch (const c10::Error&) {
      throw;  // torch's own message, as torch raises it
    } catch (const std::exception& e) {
      const std::string message =
          fmt::format("internal error (a bug in torchair_ge; please report it with the graph or model): {}", e.what());
      PyErr_SetString(ge_error.ptr(), message.c_str());
    }
  });
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
      "make_trusted_dir",
      [](const std::string& root, const std::vector<std::string>& below) {
        ge::TrustOptions trust;
        const ge::Options options = ge::python::Unwrap(ge::WithEnvironment({}));
        trust.allow_symlinks = ge::python::Unwrap(ge::BoolOption(options, ge::option::kKernelCacheAllowSymlinks));
        return ge::python::Unwrap(ge::MakeTrustedDir(root, below, trust));
      },
      pybind11::arg("root"), pybind11::arg("below") = std::vector<std::string>{},
      "Creates the cache directory `root` and `below` under it (0700 where new) and returns root's checked "
      "path; raises GeError naming the path and the rule it breaks when someone other than this user could "
      "plant files there (the kernel cache's rule, docs/reliability.md).");
  m.def(
      "kernel_cache_dir", [] { return ge::KernelCacheDir(ge::python::Unwrap(ge::WithEnvironment({}))); },
      "The cache directory in effect (ge.kernelCacheDir / $TORCHAIR_GE_CACHE_DIR, else "
      "$XDG_CACHE_HOME/torchair_ge or ~/.cache/torchair_ge): generated kernels, kernel choices, the graph cache.");
  m.def(
      "_raise_cpp_exception_for_testing", [] { return std::vector<int>().at(1); },
      "Lets a test see how a C++ exception that escapes the engine reaches Python.");
  m.def(
      "engine_version", [] { return std::string(ge::kEngineVersion); },
      "The engine's version, recorded in model files.");
  m.def("optimizer_passes", &ge::OptimizerPassNames, "Names of the graph optimizer's passes, in pipeline order.");
  m.def(
      "rewrite_rules",
      [] {
        std::vector<std::string> names;
        for (const ge::RewriteRule& rule : ge::RewriteRuleRegistry::Global().Rules()) names.push_back(rule.name);
        return names;
      },
      "Names of PatternRewrite's rules (built-in and registered), which optimization_switch may turn off too.");
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
