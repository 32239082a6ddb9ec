#include "ge/es/graph_builder.h"

#include "ge/base/half.h"
#include "ge/ops/op_registry.h"

namespace ge::es {

GraphBuilder::GraphBuilder(std::string name) : graph_(std::make_unique<Graph>(std::move(name))) {}

void GraphBuilder::Fail(Status status) {
  if (status_.ok()) status_ = std::move(status);
}

EsTensor GraphBuilder::CreateInput(int64_t index, DataType dtype, Shape shape, Format format, std::string name) {
  Node* node = graph_->AddNode(kOpData, name.empty() ? "arg" + std::to_string(index) : name, {}, 1);
  node->SetAttr("index", index);
  node->output_desc(0) = TensorDesc(dtype, std::move(shape), format);
  Status st = OpRegistry::Global().VerifyAndInfer(*node);
  if (!st.ok()) Fail(st);
  return EsTensor(this, node->output(0));
}

EsTensor GraphBuilder::CreateConst(Tensor value, std::string name) {
  Node* node = graph_->AddNode(kOpConst, name.empty() ? "const" : name, {}, 1);
  node->SetAttr("value", std::move(value));
  Status st = OpRegistry::Global().VerifyAndInfer(*node);
  if (!st.ok()) Fail(st);
  return EsTensor(this, node->output(0));
}

EsTensor GraphBuilder::CreateVector(const std::vector<int64_t>& values, DataType dtype) {
  const Shape shape = {static_cast<int64_t>(values.size())};
  if (dtype == DataType::kInt32) {
    std::vector<int32_t> narrow(values.begin(), values.end());
    return CreateConst(Tensor::FromVector(dtype, shape, narrow));
  }
  return CreateConst(Tensor::FromVector(DataType::kInt64, shape, values));
}

EsTensor GraphBuilder::CreateScalar(double value, DataType dtype) {
  Tensor t = Tensor::Allocate(TensorDesc(dtype, {}));
  switch (dtype) {
    case DataType::kFloat: *t.data_as<float>() = static_cast<float>(value); break;
    case DataType::kDouble: *t.data_as<double>() = value; break;
    case DataType::kFloat16: *t.data_as<uint16_t>() = FloatToHalfBits(static_cast<float>(value)); break;
    case DataType::kBFloat16: *t.data_as<uint16_t>() = FloatToBFloat16Bits(static_cast<float>(value)); break;
    case DataType::kInt8: *t.data_as<int8_t>() = static_cast<int8_t>(value); break;
    case DataType::kUInt8: *t.data_as<uint8_t>() = static_cast<uint8_t>(value); break;
    case DataType::kInt16: *t.data_as<int16_t>() = static_cast<int16_t>(value); break;
    case DataType::kInt32: *t.data_as<int32_t>() = static_cast<int32_t>(value); break;
    case DataType::kInt64: *t.data_as<int64_t>() = static_cast<int64_t>(value); break;
    case DataType::kBool: *t.data_as<bool>() = value != 0; break;
    default: Fail(InvalidArgument("CreateScalar: dtype {} is not supported", DataTypeName(dtype))); return {};
  }
  return CreateConst(std::move(t), "scalar");
}

std::vector<EsTensor> GraphBuilder::Op(const std::string& type, const std::vector<OpInput>& inputs, AttrMap attrs,
                                       const std::string& name, int num_outputs) {
  if (!status_.ok()) return {};
  const OpProto* proto = OpRegistry::Global().Find(type);
  if (!proto) {
    Fail(NotFound("op type '{}' is not registered", type));
    return {};
  }
  if (inputs.size() > proto->inputs.size()) {
    Fail(InvalidArgument("{} takes {} inputs, {} given", type, proto->inputs.size(), inputs.size()));
    return {};
  }
  std::vector<Value> flat;
  for (size_t i = 0; i < proto->inputs.size(); ++i) {
    const OpInput in = i < inputs.size() ? inputs[i] : OpInput{};
    const bool dynamic = proto->inputs[i].kind == InputKind::kDynamic;
    auto take = [&](const EsTensor& t) -> bool {
      if (t.builder() != this || !t.valid()) {
        Fail(InvalidArgument("{} input '{}' is not a value of this graph", type, proto->inputs[i].name));
        return false;
      }
      flat.push_back(t.value());
      return true;
    };
    if (const auto* list = std::get_if<std::vector<EsTensor>>(&in)) {
      if (!dynamic) {
        Fail(InvalidArgument("{} input '{}' takes one value, got a list", type, proto->inputs[i].name));
        return {};
      }
      for (const EsTensor& t : *list)
        if (!take(t)) return {};
    } else if (const auto* one = std::get_if<EsTensor>(&in)) {
      if (!take(*one)) return {};
    } else if (!dynamic) {
      flat.push_back(Value{});  // absent optional; Verify rejects a missing required input
    }
  }
  if (proto->HasDynamicOutput() != (num_outputs >= 0)) {
    Fail(InvalidArgument("{}: num_outputs must be given exactly for ops with a dynamic output", type));
    return {};
  }
  Node* node = graph_->AddNode(type, name, flat,
                               proto->HasDynamicOutput() ? num_outputs : static_cast<int>(proto->outputs.size()));
  node->mutable_attrs() = std::move(attrs);
  Status st = OpRegistry::Global().VerifyAndInfer(*node);
  if (!st.ok()) {
    Fail(st);
    return {};
  }
  std::vector<EsTensor> outs;
  for (int o = 0; o < node->num_outputs(); ++o) outs.emplace_back(this, node->output(o));
  return outs;
}

EsTensor GraphBuilder::Op1(const std::string& type, const std::vector<OpInput>& inputs, AttrMap attrs,
                           const std::string& name) {
  auto outs = Op(type, inputs, std::move(attrs), name);
  return outs.empty() ? EsTensor() : outs[0];
}

void GraphBuilder::SetOutputs(const std::vector<EsTensor>& outputs) {
  if (has_outputs_) return Fail(FailedPrecondition("SetOutputs was already called"));
  has_outputs_ = true;
  Op("NetOutput", {outputs}, {}, "NetOutput");
}

Expected<std::unique_ptr<Graph>> GraphBuilder::Build() {
  if (!status_.ok()) return status_;
  if (!graph_) return FailedPrecondition("Build() was already called");
  GE_CHECK(has_outputs_, "graph '{}' has no outputs: call SetOutputs first", graph_->name());
  GE_RETURN_IF_ERROR(graph_->Verify());
  return std::move(graph_);
}

namespace {
EsTensor Binary(const char* type, const EsTensor& a, const EsTensor& b) {
  GraphBuilder* builder = a.builder() ? a.builder() : b.builder();
  return builder ? builder->Op1(type, {a, b}) : EsTensor();
}
}  // namespace

EsTensor operator+(const EsTensor& a, const EsTensor& b) { return Binary("Add", a, b); }
EsTensor operator-(const EsTensor& a, const EsTensor& b) { return Binary("Sub", a, b); }
EsTensor operator*(const EsTensor& a, const EsTensor& b) { return Binary("Mul", a, b); }
EsTensor operator/(const EsTensor& a, const EsTensor& b) { return Binary("RealDiv", a, b); }
EsTensor operator-(const EsTensor& a) { return a.builder() ? a.builder()->Op1("Neg", {a}) : EsTensor(); }
EsTensor operator*(const EsTensor& a, double s) {
  return a.builder() ? a * a.builder()->CreateScalar(s, a.dtype()) : EsTensor();
}
EsTensor operator+(const EsTensor& a, double s) {
  return a.builder() ? a + a.builder()->CreateScalar(s, a.dtype()) : EsTensor();
}
}  // namespace ge::es
