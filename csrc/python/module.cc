// torchair_ge._C: the engine seen from Python. Conversions only; no logic lives here.
#include "devices/cpu/cpu_device.h"
#include "python/py_utils.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "torchair_ge engine bindings";
  pybind11::register_exception<ge::python::GeError>(m, "GeError", PyExc_RuntimeError);
  ge::cpu::RegisterCpuDevice();
  ge::python::BindTypes(m);
  ge::python::BindBuilder(m);
  ge::python::BindSession(m);
}
