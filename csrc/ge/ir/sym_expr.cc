#include "ge/ir/sym_expr.h"

#include <algorithm>
#include <cctype>

namespace ge {
namespace {

using Steps = std::vector<SymExpr::Step>;
using Op = SymExpr::Op;

// Bounds that keep parsing linear and shallow on untrusted text.
constexpr size_t kMaxTextLength = 4096;
constexpr int kMaxDepth = 64;

// Recursive descent over: compare := sum [(==|!=|<|<=|>|>=) sum]; sum := term {(+|-) term};
// term := unary {(*|//|%) unary}; unary := -unary | atom; atom := int | symbol | (compare) |
// max(compare, compare) | min(compare, compare).
class Parser {
 public:
  Parser(std::string_view text, const std::vector<std::string>& symbols) : text_(text), symbols_(symbols) {}

  Expected<Steps> Run() {
    GE_ASSIGN_OR_RETURN(Steps steps, Compare(0));
    SkipSpace();
    GE_CHECK(pos_ == text_.size(), "size expression '{}': unexpected '{}' at {}", text_, text_.substr(pos_, 8), pos_);
    return steps;
  }

 private:
  Expected<Steps> Compare(int depth) {
    GE_ASSIGN_OR_RETURN(Steps left, Sum(depth));
    static constexpr std::pair<std::string_view, Op> kOps[] = {{"==", Op::kEq}, {"!=", Op::kNe}, {"<=", Op::kLe},
                                                               {">=", Op::kLe}, {"<", Op::kLt},  {">", Op::kLt}};
    for (const auto& [token, op] : kOps) {
      if (!Accept(token)) continue;
      GE_ASSIGN_OR_RETURN(Steps right, Sum(depth));
      const bool swapped = token[0] == '>';  // a > b is b < a
      Steps out = swapped ? std::move(right) : std::move(left);
      const Steps& second = swapped ? left : right;
      out.insert(out.end(), second.begin(), second.end());
      out.push_back({op, 0});
      return out;
    }
    return left;
  }

  Expected<Steps> Sum(int depth) {
    GE_ASSIGN_OR_RETURN(Steps out, Term(depth));
    while (true) {
      Op op;
      if (Accept("+")) {
        op = Op::kAdd;
      } else if (Accept("-")) {
        op = Op::kSub;
      } else {
        return out;
      }
      GE_ASSIGN_OR_RETURN(Steps right, Term(depth));
      Append(out, right, op);
    }
  }

  Expected<Steps> Term(int depth) {
    GE_ASSIGN_OR_RETURN(Steps out, Unary(depth));
    while (true) {
      Op op;
      if (Accept("//")) {
        op = Op::kFloorDiv;
      } else if (Accept("*")) {
        op = Op::kMul;
      } else if (Accept("%")) {
        op = Op::kMod;
      } else {
        return out;
      }
      GE_ASSIGN_OR_RETURN(Steps right, Unary(depth));
      Append(out, right, op);
    }
  }

  Expected<Steps> Unary(int depth) {
    GE_CHECK(depth < kMaxDepth, "size expression '{}' is nested deeper than {}", text_, kMaxDepth);
    if (Accept("-")) {
      GE_ASSIGN_OR_RETURN(Steps out, Unary(depth + 1));
      out.push_back({Op::kNeg, 0});
      return out;
    }
    return Atom(depth + 1);
  }

  Expected<Steps> Atom(int depth) {
    SkipSpace();
    if (Accept("(")) {
      GE_ASSIGN_OR_RETURN(Steps inner, Compare(depth));
      GE_CHECK(Accept(")"), "size expression '{}': missing ')' at {}", text_, pos_);
      return inner;
    }
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) return Number();
    const std::string_view name = Identifier();
    GE_CHECK(!name.empty(), "size expression '{}': expected a number, symbol or '(' at {}", text_, pos_);
    if ((name == "max" || name == "min") && Accept("(")) {
      GE_ASSIGN_OR_RETURN(Steps out, Compare(depth));
      GE_CHECK(Accept(","), "size expression '{}': {}() takes two arguments", text_, name);
      GE_ASSIGN_OR_RETURN(Steps second, Compare(depth));
      GE_CHECK(Accept(")"), "size expression '{}': missing ')' after {}()", text_, name);
      Append(out, second, name == "max" ? Op::kMax : Op::kMin);
      return out;
    }
    const auto it = std::find(symbols_.begin(), symbols_.end(), name);
    GE_CHECK(it != symbols_.end(), "size expression '{}': unknown symbol '{}'", text_, name);
    return Steps{{Op::kSymbol, static_cast<int64_t>(it - symbols_.begin())}};
  }

  Expected<Steps> Number() {
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int digit = text_[pos_++] - '0';
      GE_CHECK(!__builtin_mul_overflow(value, 10, &value) && !__builtin_add_overflow(value, digit, &value),
               "size expression '{}': a number does not fit int64", text_);
    }
    return Steps{{Op::kConst, value}};
  }

  std::string_view Identifier() {
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  bool Accept(std::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  void SkipSpace() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }

  static void Append(Steps& out, const Steps& right, Op op) {
    out.insert(out.end(), right.begin(), right.end());
    out.push_back({op, 0});
  }

  std::string_view text_;
  const std::vector<std::string>& symbols_;
  size_t pos_ = 0;
};

int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t PythonMod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

Expected<int64_t> Apply(Op op, int64_t a, int64_t b) {
  int64_t out = 0;
  switch (op) {
    case Op::kAdd: GE_CHECK(!__builtin_add_overflow(a, b, &out), "size {} + {} overflows int64", a, b); return out;
    case Op::kSub: GE_CHECK(!__builtin_sub_overflow(a, b, &out), "size {} - {} overflows int64", a, b); return out;
    case Op::kMul: GE_CHECK(!__builtin_mul_overflow(a, b, &out), "size {} * {} overflows int64", a, b); return out;
    case Op::kFloorDiv:
    case Op::kMod:
      GE_CHECK(b != 0, "size expression divides {} by zero", a);
      GE_CHECK(!(a == INT64_MIN && b == -1), "size {} // -1 overflows int64", a);
      return op == Op::kFloorDiv ? FloorDiv(a, b) : PythonMod(a, b);
    case Op::kMax: return std::max(a, b);
    case Op::kMin: return std::min(a, b);
    case Op::kEq: return int64_t{a == b};
    case Op::kNe: return int64_t{a != b};
    case Op::kLt: return int64_t{a < b};
    case Op::kLe: return int64_t{a <= b};
    default: return Internal("size expression: {} is not a binary operator", static_cast<int>(op));
  }
}

// Binding strength for printing; higher binds tighter.
int Precedence(Op op) {
  switch (op) {
    case Op::kEq:
    case Op::kNe:
    case Op::kLt:
    case Op::kLe: return 1;
    case Op::kAdd:
    case Op::kSub: return 2;
    case Op::kMul:
    case Op::kFloorDiv:
    case Op::kMod: return 3;
    case Op::kNeg: return 4;
    default: return 5;
  }
}

std::string_view Spelling(Op op) {
  switch (op) {
    case Op::kAdd: return "+";
    case Op::kSub: return "-";
    case Op::kMul: return "*";
    case Op::kFloorDiv: return "//";
    case Op::kMod: return "%";
    case Op::kEq: return "==";
    case Op::kNe: return "!=";
    case Op::kLt: return "<";
    case Op::kLe: return "<=";
    case Op::kMax: return "max";
    default: return "min";
  }
}

}  // namespace

Expected<SymExpr> SymExpr::Parse(std::string_view text, const std::vector<std::string>& symbols) {
  GE_CHECK(text.size() <= kMaxTextLength, "size expression of {} characters (at most {})", text.size(), kMaxTextLength);
  GE_ASSIGN_OR_RETURN(Steps steps, Parser(text, symbols).Run());
  return SymExpr(std::move(steps));
}

Expected<int64_t> SymExpr::Evaluate(const std::vector<int64_t>& values) const {
  std::vector<int64_t> stack;
  stack.reserve(steps_.size());
  for (const Step& step : steps_) {
    if (step.op == Op::kConst) {
      stack.push_back(step.operand);
    } else if (step.op == Op::kSymbol) {
      GE_CHECK(step.operand >= 0 && step.operand < static_cast<int64_t>(values.size()),
               "size expression reads symbol {} of {}", step.operand, values.size());
      stack.push_back(values[static_cast<size_t>(step.operand)]);
    } else if (step.op == Op::kNeg) {
      GE_CHECK(!stack.empty() && stack.back() != INT64_MIN, "size expression: bad negation");
      stack.back() = -stack.back();
    } else {
      GE_CHECK(stack.size() >= 2, "size expression: operator without operands");
      const int64_t b = stack.back();
      stack.pop_back();
      GE_ASSIGN_OR_RETURN(stack.back(), Apply(step.op, stack.back(), b));
    }
  }
  GE_CHECK(stack.size() == 1, "size expression leaves {} values", stack.size());
  return stack.back();
}

std::string SymExpr::ToString(const std::vector<std::string>& symbols) const {
  struct Printed {
    std::string text;
    int precedence;
    Op top;  // the operator applied last
    // Among its operators outside parentheses, the multiplicative ones are all '*': only then
    // may it follow "x*" unparenthesized (x*(a//b*c) is not x*a//b*c).
    bool plain_product = true;
  };
  std::vector<Printed> stack;
  auto wrap = [](const Printed& operand, int precedence) {
    return operand.precedence < precedence ? "(" + operand.text + ")" : operand.text;
  };
  // A right operand of equal precedence needs no parentheses only where regrouping keeps the
  // value: a+(b-c) = a+b-c and a*(b*c) = a*b*c, but a-(b-c), a*(b//c), a//(b*c), a*(b//c*d) differ.
  auto regroups = [](Op op, const Printed& right) {
    return (op == Op::kAdd && (right.top == Op::kAdd || right.top == Op::kSub)) ||
           (op == Op::kMul && right.top == Op::kMul && right.plain_product);
  };
  for (const Step& step : steps_) {
    if (step.op == Op::kConst) {
      stack.push_back({std::to_string(step.operand), step.operand < 0 ? Precedence(Op::kNeg) : 5, Op::kConst});
    } else if (step.op == Op::kSymbol) {
      const auto i = static_cast<size_t>(step.operand);
      stack.push_back({i < symbols.size() ? symbols[i] : "?" + std::to_string(i), 5, Op::kSymbol});
    } else if (step.op == Op::kNeg) {
      if (stack.empty()) return "?";
      stack.back() = {"-" + wrap(stack.back(), 4), 4, Op::kNeg};
    } else {
      if (stack.size() < 2) return "?";
      Printed b = std::move(stack.back());
      stack.pop_back();
      Printed& a = stack.back();
      const int p = Precedence(step.op);
      if (step.op == Op::kMax || step.op == Op::kMin) {
        a = {std::string(Spelling(step.op)) + "(" + a.text + ", " + b.text + ")", 5, step.op};
      } else {  // comparisons do not chain: a comparison operand of a comparison is parenthesized
        const int left = p == 1 ? 2 : p;
        const int right = regroups(step.op, b) ? p : p + 1;
        // A left operand of this precedence joins the chain unwrapped; a right one only when it regroups.
        const bool plain = step.op != Op::kFloorDiv && step.op != Op::kMod && (a.precedence != p || a.plain_product) &&
                           (b.precedence != p || right == p);
        a = {wrap(a, left) + std::string(Spelling(step.op)) + wrap(b, right), p, step.op, plain};
      }
    }
  }
  return stack.size() == 1 ? stack.back().text : "?";
}

SymExpr SymExpr::Combine(Op op, const SymExpr& a, const SymExpr& b) {
  const std::optional<int64_t> x = a.ConstantValue(), y = b.ConstantValue();
  if (x && y) {
    Expected<int64_t> folded = Apply(op, *x, *y);
    if (folded.ok()) return Constant(*folded);
  }
  if ((op == Op::kAdd && y == 0) || (op == Op::kSub && y == 0) || (op == Op::kMul && y == 1) ||
      (op == Op::kFloorDiv && y == 1))
    return a;
  if ((op == Op::kAdd && x == 0) || (op == Op::kMul && x == 1)) return b;
  if (op == Op::kMul && (x == 0 || y == 0)) return Constant(0);
  if ((op == Op::kMax || op == Op::kMin) && a == b) return a;
  if (op == Op::kMul && x && !y) return Combine(op, b, a);  // constants right: x*c, which // can undo
  // A product x*c (a constant is one step, so it is the whole right operand): (x*c)*d = x*(c*d),
  // and (x*c)//d = x*(c/d) for d > 0 dividing c.
  const Steps& left = a.steps_;
  const bool scaled = y && left.size() >= 3 && left.back().op == Op::kMul && left[left.size() - 2].op == Op::kConst;
  if (scaled && (op == Op::kMul || (op == Op::kFloorDiv && *y > 0 && left[left.size() - 2].operand % *y == 0))) {
    const int64_t c = left[left.size() - 2].operand;
    const SymExpr factor = op == Op::kMul ? Combine(op, Constant(c), b) : Constant(c / *y);
    if (factor.IsConstant()) return Combine(Op::kMul, SymExpr(Steps(left.begin(), left.end() - 2)), factor);
  }
  Steps out = left;
  out.insert(out.end(), b.steps_.begin(), b.steps_.end());
  out.push_back({op, 0});
  return SymExpr(std::move(out));
}

bool SymExpr::operator==(const SymExpr& other) const {
  return std::equal(steps_.begin(), steps_.end(), other.steps_.begin(), other.steps_.end(),
                    [](const Step& p, const Step& q) { return p.op == q.op && p.operand == q.operand; });
}

int64_t SymExpr::MaxSymbol() const {
  int64_t out = -1;
  for (const Step& step : steps_)
    if (step.op == Op::kSymbol) out = std::max(out, step.operand);
  return out;
}

}  // namespace ge
