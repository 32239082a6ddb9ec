// The registry of op prototypes. Built once, on first use, from the per-family tables in
// ops/defs; users may add their own ops with Register().
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ge/ops/op_proto.h"

namespace ge {

class OpRegistry {
 public:
  static OpRegistry& Global();

  Status Register(OpProto proto);  // fails on a duplicate type
  const OpProto* Find(const std::string& type) const;
  std::vector<std::string> OpTypes() const;  // sorted

  // Fills attrs the node does not set with the prototype's defaults.
  Status FillDefaults(Node& node) const;
  // The node's type is registered, it has as many inputs as its prototype takes and every
  // required one is connected: what any step may rely on before reading a node's inputs.
  Status VerifyInputs(const Node& node) const;
  // VerifyInputs, then dtypes per type variable, attr presence and types (attrs starting with
  // '_' are private and unchecked).
  Status Verify(const Node& node) const;
  // Verify, then set every output desc: dtypes bound by type variables, then the op's own
  // InferShape.
  Status VerifyAndInfer(Node& node) const;

 private:
  OpRegistry() = default;
  mutable std::mutex mu_;
  // Hashed: every compile looks up each node's prototype several times (prepare, InferShape,
  // verify-after-pass); entries never move, so the pointers Find returns stay valid.
  std::unordered_map<std::string, OpProto> protos_;
};

// Whether ops of `type` are collectives (OpProto::communicates): run in program order, on the
// communication stream, their control edges only ordering them.
bool IsCollective(const std::string& type);

// Graph::Verify plus every node re-verified and re-inferred in topological order: the descs on
// the graph must be the ones inference gives (a desc not set yet is filled in). The prepare
// stage, the InferShape pass and verify-after-pass use it.
Status VerifyGraphTypes(Graph& graph);

// Per-family registration tables (ops/defs/*.cc).
void RegisterArrayOps(OpRegistry& registry);
void RegisterElementwiseOps(OpRegistry& registry);
void RegisterMathOps(OpRegistry& registry);
void RegisterNnOps(OpRegistry& registry);
void RegisterIndexingOps(OpRegistry& registry);
void RegisterLogicalOps(OpRegistry& registry);
void RegisterInplaceOps(OpRegistry& registry);
void RegisterMathExtraOps(OpRegistry& registry);
void RegisterSelectionOps(OpRegistry& registry);
void RegisterCollectiveOps(OpRegistry& registry);
void RegisterFallbackOps(OpRegistry& registry);

// The elementwise prototypes: y = f(x) (same shape and dtype), and y = f(x1, x2) with broadcasting.
void RegisterUnary(OpRegistry& r, const char* type, const std::vector<DataType>& allowed, const char* doc);
void RegisterBinary(OpRegistry& r, const char* type, const std::vector<DataType>& allowed, const char* doc);

// The reduction prototype (x, const axes; keep_dims) shared by the Reduce* ops.
void RegisterReduce(OpRegistry& r, const char* type, const std::vector<DataType>& allowed, const char* doc,
                    const std::vector<AttrDef>& extra_attrs = {});

}  // namespace ge
