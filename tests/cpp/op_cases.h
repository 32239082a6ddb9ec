// The op registry's test cases: per registered op, one case whose inferred outputs are checked
// and one that must be rejected (op_registry_test.cc runs them).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ge/es/graph_builder.h"

namespace ge::op_cases {

using es::EsTensor;
using es::GraphBuilder;
using IntList = std::vector<int64_t>;
constexpr DataType F32 = DataType::kFloat;

struct OpCase {
  std::string op;
  // Builds the op on `b`; returns its outputs (empty when building failed).
  std::function<std::vector<EsTensor>(GraphBuilder& b)> build;
  std::vector<TensorDesc> expected;  // empty: the case must fail
};

inline EsTensor In(GraphBuilder& b, Shape s, DataType dt = F32) {
  static int64_t next = 0;
  return b.CreateInput(next++, dt, std::move(s));
}

inline OpCase Unary(const char* op, DataType dt = F32) {
  return OpCase{op, [op, dt](GraphBuilder& b) { return b.Op(op, {In(b, {2, 3}, dt)}); }, {TensorDesc(dt, {2, 3})}};
}
inline OpCase Binary(const char* op) {
  return OpCase{op,
                [op](GraphBuilder& b) {
                  return b.Op(op, {In(b, {4, 1, 3}), In(b, {5, 1})});
                },
                {TensorDesc(F32, {4, 5, 3})}};
}
inline OpCase BinaryBad(const char* op) {
  return OpCase{op, [op](GraphBuilder& b) { return b.Op(op, {In(b, {2, 3}), In(b, {4})}); }, {}};
}

// Elementwise, casts, products, reductions, shapes (op_cases_math.cc).
std::vector<OpCase> MathAndShapeCases();
// Comparisons, selection, NN, indexing, the opaque ops (op_cases_nn.cc).
std::vector<OpCase> NnAndOtherCases();

}  // namespace ge::op_cases
