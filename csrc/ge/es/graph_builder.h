// EagerStyle graph builder: build an Ascend IR graph op by op. Every op is verified and its
// outputs inferred as it is added, so shapes are known while building. Errors are sticky:
// the first one is kept, later ops on invalid values are skipped, Build() returns it.
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "ge/ir/graph.h"

namespace ge::es {

class GraphBuilder;

// A value being built: one output of a node in a GraphBuilder's graph.
class EsTensor {
 public:
  EsTensor() = default;
  EsTensor(GraphBuilder* builder, Value value) : builder_(builder), value_(value) {}
  bool valid() const { return builder_ != nullptr && value_.valid(); }
  GraphBuilder* builder() const { return builder_; }
  Value value() const { return value_; }
  const TensorDesc& desc() const { return value_.node->output_desc(value_.index); }
  DataType dtype() const { return desc().dtype; }
  const Shape& shape() const { return desc().shape; }

 private:
  GraphBuilder* builder_ = nullptr;
  Value value_;
};

// One prototype input: absent (optional), a single value, or a list (dynamic input).
using OpInput = std::variant<std::monostate, EsTensor, std::vector<EsTensor>>;

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "graph");

  EsTensor CreateInput(int64_t index, DataType dtype, Shape shape, Format format = Format::kND, std::string name = "");
  EsTensor CreateConst(Tensor value, std::string name = "");
  EsTensor CreateVector(const std::vector<int64_t>& values, DataType dtype = DataType::kInt64);
  // A 0-d constant of `dtype` holding `value` (converted as a C cast / IEEE rounding would).
  EsTensor CreateScalar(double value, DataType dtype);

  // Adds an op of a registered type. `inputs` follow the prototype's input order.
  // `num_outputs` is required for (and only for) ops with a dynamic output.
  std::vector<EsTensor> Op(const std::string& type, const std::vector<OpInput>& inputs, AttrMap attrs = {},
                           const std::string& name = "", int num_outputs = -1);
  // Single-output convenience form of Op().
  EsTensor Op1(const std::string& type, const std::vector<OpInput>& inputs, AttrMap attrs = {},
               const std::string& name = "");

  void SetOutputs(const std::vector<EsTensor>& outputs);
  // Verifies the whole graph and hands it over; the builder is spent afterwards.
  Expected<std::unique_ptr<Graph>> Build();

  const Status& status() const { return status_; }
  Graph& graph() { return *graph_; }

 private:
  void Fail(Status status);
  std::unique_ptr<Graph> graph_;
  Status status_;
  bool has_outputs_ = false;
};

// Operators for hand-written C++ graphs. One typed function per registered op (es::Conv2D,
// es::MatMulV2, ...) is generated from the registry into "ge/es/es_ops.h" (target ge_es).
EsTensor operator+(const EsTensor& a, const EsTensor& b);
EsTensor operator-(const EsTensor& a, const EsTensor& b);
EsTensor operator*(const EsTensor& a, const EsTensor& b);
EsTensor operator/(const EsTensor& a, const EsTensor& b);
EsTensor operator-(const EsTensor& a);
EsTensor operator*(const EsTensor& a, double scalar);
EsTensor operator+(const EsTensor& a, double scalar);

}  // namespace ge::es
