// A size template: one IR graph built for some sizes, plus where in it each size-dependent
// integer sits (an input dim, an int attribute, an element of a constant) as an expression over
// the graph's symbols. Instantiate() makes the graph for other sizes without the frontend:
// substitute every site, then re-infer every node's output descs through the op registry, as
// the builder did. This is how a graph with symbolic sizes is converted once and then only
// instantiated per set of sizes, in the process (DynamicGraph) and from a model file (ge_run).
//
// The frontend finds the sites by building the graph at two sizes (DiffSizes) and names each
// difference with an expression of Dynamo's; a third build checked against Instantiate()
// (CheckSameGraph) is what makes the template trusted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ge/ir/graph.h"
#include "ge/ir/sym_expr.h"

namespace ge {

// One symbol: where a call's inputs give its value, and the range Dynamo compiled for.
struct SymbolDef {
  std::string name;    // Dynamo's, e.g. "s0"
  int64_t input = -1;  // the engine input whose size it is; -1 when no input has it as a dim
  int64_t dim = -1;
  int64_t min = 0;
  int64_t max = INT64_MAX;
};

enum class SizeSiteKind { kInputDim, kAttr, kConstElement };
std::string_view SizeSiteKindName(SizeSiteKind kind);
Expected<SizeSiteKind> ParseSizeSiteKind(std::string_view name);

struct SizeSite {
  std::string node;  // the node's name in the template graph
  SizeSiteKind kind = SizeSiteKind::kAttr;
  std::string attr;    // kAttr: the attribute
  int64_t index = -1;  // kInputDim: the dim; kAttr: the list element (-1: an int attribute); kConstElement: element
  SymExpr expr;
};

struct SizeTemplate {
  std::vector<SymbolDef> symbols;
  std::vector<SizeSite> sites;
  std::vector<SymExpr> guards;  // must all hold (be non-zero) for the sizes of a call

  std::vector<std::string> SymbolNames() const;
  // Every site names a node of `graph` and a place that holds an integer; every expression
  // reads known symbols; every symbol source is an input dim of `graph`. For untrusted files.
  Status Verify(const Graph& graph) const;
};

// The symbols' values for inputs of these shapes (engine input order): read from each symbol's
// input dim, then checked against its range, every guard and every input's expected shape.
// Errors name the input, the dim and the expected expression. Built once per model (it indexes
// the input sites), read on every call; `sizes` must outlive it.
class SymbolReader {
 public:
  SymbolReader(const Graph& graph, const SizeTemplate& sizes);
  Expected<std::vector<int64_t>> Read(const std::vector<Shape>& input_shapes) const;

 private:
  const SizeTemplate* sizes_;
  std::vector<std::string> input_names_;
  std::vector<Shape> expected_;                            // per input: the template's dims
  std::vector<std::vector<const SizeSite*>> input_sites_;  // per input: its symbolic dims
};
// One-off form of SymbolReader(graph, sizes).Read(input_shapes).
Expected<std::vector<int64_t>> ReadSymbols(const Graph& graph, const SizeTemplate& sizes,
                                           const std::vector<Shape>& input_shapes);

// `graph` for the sizes `values` (one per symbol): a copy whose sites hold their expressions'
// values and whose output descs are inferred again, named `name` (empty: the template's name).
// The copy shares constants' bytes except where an element changes. Every value's shape is then
// named as expressions over the symbols where the ops' rules can (ops/symbolic_infer.h; each
// checked against the inferred shape): TensorDesc::symbolic, and for dumps the node's
// kAttrSymbolicShapes.
Expected<std::unique_ptr<Graph>> Instantiate(const Graph& graph, const SizeTemplate& sizes,
                                             const std::vector<int64_t>& values, const std::string& name = "");

// One integer that differs between two builds of one graph at different sizes.
struct SizeDifference {
  std::string node;
  SizeSiteKind kind;
  std::string attr;
  int64_t index;
  int64_t a;
  int64_t b;
};

// The integers that differ between `a` and `b`, which must otherwise be the same graph (nodes
// matched by name: type, edges, attributes, constants' dtype/shape/bytes);
// otherwise an error naming the first other difference. Output descs are not compared (they
// are inferred from the rest).
Expected<std::vector<SizeDifference>> DiffSizes(const Graph& a, const Graph& b);

// OK when `a` and `b` are the same graph, output descs included; else the first difference.
Status CheckSameGraph(const Graph& a, const Graph& b);

}  // namespace ge
