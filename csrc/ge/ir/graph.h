// Graph: owns its nodes; keeps every output's user list consistent through one edit API.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ge/ir/node.h"

namespace ge {

inline constexpr const char* kOpData = "Data";
inline constexpr const char* kOpConst = "Const";
inline constexpr const char* kOpNetOutput = "NetOutput";
// The host-fallback op: any torch operator, run by the framework through its dispatcher.
inline constexpr const char* kOpTorch = "TorchOp";
// A generated kernel made by auto-fusion (ge/runtime/fused_kernel_def.h describes it).
inline constexpr const char* kOpFusedKernel = "FusedKernel";

class Graph {
 public:
  explicit Graph(std::string name = "graph") : name_(std::move(name)) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }

  // Adds a node; `name` is made unique (empty means "<type>"). Inputs may be invalid
  // Values for absent optional inputs.
  Node* AddNode(const std::string& type, const std::string& name, const std::vector<Value>& inputs, int num_outputs);
  void AppendInput(Node* node, Value value);
  void SetInput(Node* node, int index, Value value);
  // Every consumer of `from` reads `to` instead.
  void ReplaceAllUsesWith(Value from, Value to);
  void AddControlEdge(Node* src, Node* dst);
  // `to` runs before every node `from` had to run before, and `from` no longer orders anything.
  void MoveControlOutputs(Node* from, Node* to);
  // Removes a node that no other node uses; its input edges and control edges are dropped.
  Status RemoveNode(Node* node);

  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  // Nodes in creation order.
  std::vector<Node*> nodes() const;
  Node* FindNode(const std::string& name) const;
  // Data nodes sorted by their `index` attr.
  std::vector<Node*> DataNodes() const;
  Node* NetOutputNode() const;

  // Kahn's algorithm over data and control edges; ties broken by creation order so the
  // result is deterministic. Fails on a cycle.
  Expected<std::vector<Node*>> TopologicalOrder() const;
  // Structural checks: edges and user lists agree, one NetOutput, Data indices are 0..n-1,
  // no cycles. (Per-op checks against prototypes live in the op registry.)
  Status Verify() const;

 private:
  void AddUse(Value v, Use use);
  void RemoveUse(Value v, Use use);

  std::string name_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::unordered_map<std::string, Node*> by_name_;
  int64_t next_id_ = 0;
};

// A copy of `graph` whose nodes are created in its topological order (as a graph read back from
// a model file is): the same names, attributes, descs and edges; constants share their bytes.
// `name` names the copy (empty: the original's name).
Expected<std::unique_ptr<Graph>> CloneGraph(const Graph& graph, const std::string& name = "");

}  // namespace ge
