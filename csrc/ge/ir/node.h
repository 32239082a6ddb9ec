// Node: one operator instance. Nodes are owned by their Graph and never own each other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ge/ir/attr.h"
#include "ge/ir/tensor_desc.h"

namespace ge {

class Graph;
class Node;

// One output of a node. An invalid Value (node == nullptr) marks an absent optional input.
struct Value {
  Node* node = nullptr;
  int index = 0;
  bool valid() const { return node != nullptr; }
  bool operator==(const Value& o) const { return node == o.node && index == o.index; }
  bool operator!=(const Value& o) const { return !(*this == o); }
};

// A consumer of a value: `user`'s input number `input_index`.
struct Use {
  Node* user;
  int input_index;
  bool operator==(const Use& o) const { return user == o.user && input_index == o.input_index; }
};

class Node {
 public:
  const std::string& name() const { return name_; }
  const std::string& type() const { return type_; }
  int64_t id() const { return id_; }  // creation order; makes every ordering deterministic
  Graph* graph() const { return graph_; }

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const std::vector<Value>& inputs() const { return inputs_; }
  Value input(int i) const { return inputs_.at(static_cast<size_t>(i)); }

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  Value output(int i) { return Value{this, i}; }
  TensorDesc& output_desc(int i) { return outputs_.at(static_cast<size_t>(i)).desc; }
  const TensorDesc& output_desc(int i) const { return outputs_.at(static_cast<size_t>(i)).desc; }
  const std::vector<Use>& users(int output) const { return outputs_.at(static_cast<size_t>(output)).users; }
  bool HasUsers() const;

  const AttrMap& attrs() const { return attrs_; }
  AttrMap& mutable_attrs() { return attrs_; }
  bool HasAttr(const std::string& name) const { return attrs_.count(name) != 0; }
  void SetAttr(const std::string& name, AttrValue value) { attrs_[name] = std::move(value); }
  template <typename T>
  Expected<T> GetAttr(const std::string& name) const {
    return ge::GetAttr<T>(attrs_, name);
  }
  template <typename T>
  T GetAttrOr(const std::string& name, T fallback) const {
    return ge::GetAttrOr<T>(attrs_, name, std::move(fallback));
  }

  const std::vector<Node*>& control_inputs() const { return control_inputs_; }
  const std::vector<Node*>& control_outputs() const { return control_outputs_; }

  std::string ToString() const;  // "Add 'add_1'"

 private:
  friend class Graph;
  struct Output {
    TensorDesc desc;
    std::vector<Use> users;
  };
  Node(Graph* graph, int64_t id, std::string type, std::string name, int num_outputs)
      : graph_(graph),
        id_(id),
        type_(std::move(type)),
        name_(std::move(name)),
        outputs_(static_cast<size_t>(num_outputs)) {}

  Graph* graph_;
  int64_t id_;
  std::string type_;
  std::string name_;
  std::vector<Value> inputs_;
  std::vector<Output> outputs_;
  AttrMap attrs_;
  std::vector<Node*> control_inputs_;
  std::vector<Node*> control_outputs_;
};

}  // namespace ge
