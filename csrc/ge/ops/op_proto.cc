#include "ge/ops/op_proto.h"

namespace ge {

namespace dtypes {
const std::vector<DataType> kFloat = {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat, DataType::kDouble};
const std::vector<DataType> kInt = {DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kInt64,
                                    DataType::kUInt8};
const std::vector<DataType> kIndex = {DataType::kInt32, DataType::kInt64};
const std::vector<DataType> kNumeric = [] {
  std::vector<DataType> v = kFloat;
  v.insert(v.end(), kInt.begin(), kInt.end());
  return v;
}();
const std::vector<DataType> kAll = [] {
  std::vector<DataType> v = kNumeric;
  v.push_back(DataType::kBool);
  return v;
}();
}  // namespace dtypes

const TypeVar* OpProto::FindTypeVar(const std::string& name) const {
  for (const auto& tv : type_vars)
    if (tv.name == name) return &tv;
  return nullptr;
}

const AttrDef* OpProto::FindAttr(const std::string& name) const {
  for (const auto& a : attrs)
    if (a.name == name) return &a;
  return nullptr;
}

int OpProto::DynamicInputIndex() const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].kind == InputKind::kDynamic) return static_cast<int>(i);
  return -1;
}

std::pair<int, int> OpProto::InputRange(int def_index, int num_node_inputs) const {
  const int dyn = DynamicInputIndex();
  const int dyn_count = dyn < 0 ? 0 : num_node_inputs - static_cast<int>(inputs.size()) + 1;
  if (dyn < 0 || def_index < dyn) return {def_index, def_index + 1};
  if (def_index == dyn) return {dyn, dyn + dyn_count};
  const int begin = def_index - 1 + dyn_count;
  return {begin, begin + 1};
}

OpDef& OpDef::TypeVar(std::string name, std::vector<DataType> allowed, bool per_value) {
  proto_.type_vars.push_back({std::move(name), std::move(allowed), per_value});
  return *this;
}

OpDef& OpDef::AddInput(std::string name, InputKind kind, std::string type_var) {
  proto_.inputs.push_back({std::move(name), kind, std::move(type_var)});
  return *this;
}

OpDef& OpDef::Output(std::string name, std::string type_var) {
  proto_.outputs.push_back({std::move(name), std::move(type_var)});
  return *this;
}

OpDef& OpDef::DynamicOutput(std::string name, std::string type_var) {
  proto_.outputs.push_back({std::move(name), std::move(type_var), true});
  return *this;
}

OpDef& OpDef::Attr(std::string name, AttrType type, std::optional<AttrValue> default_value) {
  proto_.attrs.push_back({std::move(name), type, std::move(default_value)});
  return *this;
}

OpDef& OpDef::Infer(InferShapeFn fn) {
  proto_.infer_shape = std::move(fn);
  return *this;
}

OpDef& OpDef::InferSymbolic(InferSymbolicFn fn) {
  proto_.infer_symbolic = std::move(fn);
  return *this;
}

OpDef& OpDef::Inplace(int output, int input) {
  proto_.inplace.emplace_back(output, input);
  return *this;
}

OpDef& OpDef::Communicates(bool in_input_memory) {
  proto_.communicates = true;
  proto_.communicates_in_input = in_input_memory;
  return *this;
}

OpDef& OpDef::Doc(std::string doc) {
  proto_.doc = std::move(doc);
  return *this;
}

Value InferContext::FlatInput(int def_index) const {
  auto [begin, end] = proto_.InputRange(def_index, node_.num_inputs());
  return begin < end && begin < node_.num_inputs() ? node_.input(begin) : Value{};
}

bool InferContext::HasInput(int def_index) const { return FlatInput(def_index).valid(); }

const TensorDesc& InferContext::Input(int def_index) const {
  Value v = FlatInput(def_index);
  return v.node->output_desc(v.index);
}

int InferContext::NumDynamic() const {
  auto [begin, end] = proto_.InputRange(proto_.DynamicInputIndex(), node_.num_inputs());
  return end - begin;
}

const TensorDesc& InferContext::Dynamic(int k) const {
  Value v = node_.input(proto_.InputRange(proto_.DynamicInputIndex(), node_.num_inputs()).first + k);
  return v.node->output_desc(v.index);
}

const Tensor* InferContext::ConstInput(int def_index) const {
  Value v = FlatInput(def_index);
  if (!v.valid() || v.node->type() != kOpConst) return nullptr;
  auto it = v.node->attrs().find("value");
  return it == v.node->attrs().end() ? nullptr : std::get_if<Tensor>(&it->second);
}

}  // namespace ge
