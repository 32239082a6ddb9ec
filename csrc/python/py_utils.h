// Shared helpers of the Python bindings: Status -> exception, attribute conversion.
#pragma once

#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/utils/pybind.h>

#include "ge/ir/graph.h"
#include "ge/ops/op_proto.h"

namespace ge::python {

namespace py = pybind11;

// Raised in Python as torchair_ge._C.GeError (a RuntimeError).
class GeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A built graph waiting to be handed to a Session, which takes ownership.
struct PyGraph {
  std::unique_ptr<Graph> graph;
  Graph& get() {
    if (!graph) throw GeError("this graph was already added to a session");
    return *graph;
  }
};

inline void ThrowIfError(const Status& status) {
  if (!status.ok()) throw GeError(status.ToString());
}

template <typename T>
T Unwrap(Expected<T> value) {
  ThrowIfError(value.status());
  return std::move(value).value();
}

// Converts a Python value to an attribute of the prototype's declared type (or, for private
// "_" attrs the prototype does not declare, of the type the Python value suggests).
AttrValue ToAttr(const OpProto& proto, const std::string& name, const py::handle& value);
py::object FromAttr(const AttrValue& value);

// The engine's ATen calls must not be routed into Python dispatch modes (FakeTensorMode is
// active while Dynamo compiles; user modes may be active while a graph runs).
struct NoPythonDispatch {
  c10::impl::ExcludeDispatchKeyGuard guard{
      c10::DispatchKeySet({c10::DispatchKey::Python, c10::DispatchKey::PythonTLSSnapshot})};
};

// (dtype, shape) per desc.
inline py::list DescsToList(const std::vector<TensorDesc>& descs) {
  py::list out;
  for (const auto& d : descs) out.append(py::make_tuple(d.dtype, d.shape));
  return out;
}

void BindTypes(py::module_& m);
void BindBuilder(py::module_& m);
void BindSession(py::module_& m);
void BindSymbolic(py::module_& m);

}  // namespace ge::python
