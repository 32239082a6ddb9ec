#include "ge/serialize/dot_export.h"

#include <map>

#include "ge/ir/annotations.h"

namespace ge {
namespace {

std::string Escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

const char* EngineColour(const std::string& engine, const std::string& type) {
  if (type == kOpData) return "#c7e9c0";
  if (type == kOpConst) return "#eeeeee";
  if (type == kOpNetOutput) return "#fdd0a2";
  if (engine == "native") return "#c6dbef";
  if (engine == "host_fallback") return "#fcbba1";
  return "#ffffff";  // not partitioned yet
}

const char* StreamColour(int64_t stream) {
  static const char* kColours[] = {"#08519c", "#a50f15", "#006d2c", "#54278f", "#8c2d04"};
  return kColours[static_cast<size_t>(stream < 0 ? 0 : stream) % 5];
}

std::string NodeLabel(const Node& node) {
  std::string label = Escape(node.type());
  if (node.name() != node.type()) label += "\\n" + Escape(node.name());
  const auto offsets = node.GetAttrOr<std::vector<int64_t>>(kAttrMemOffsets, {});
  for (int o = 0; o < node.num_outputs(); ++o) {
    const TensorDesc& d = node.output_desc(o);
    label += fmt::format("\\n{}{}", DataTypeName(d.dtype).substr(3), ShapeToString(d.shape));
    if (static_cast<size_t>(o) < offsets.size() && offsets[static_cast<size_t>(o)] >= 0)
      label += fmt::format(" @{}+{}", offsets[static_cast<size_t>(o)], d.ByteSize());
  }
  return label;
}

}  // namespace

Expected<std::string> GraphToDot(const Graph& graph) {
  GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
  std::map<const Node*, size_t> id;
  for (size_t i = 0; i < order.size(); ++i) id[order[i]] = i;

  std::string out = fmt::format(
      "digraph \"{}\" {{\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", "
      "fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n",
      Escape(graph.name()));
  // Legend: what the colours mean.
  out +=
      "  legend [shape=plaintext, style=\"\", label=\"fill: engine (blue native, red host_fallback, green input, "
      "grey const, orange output)\\nborder: stream; boxes: fused groups\"];\n";

  std::map<int64_t, std::vector<const Node*>> groups;
  for (const Node* node : order) {
    const int64_t group = node->GetAttrOr<int64_t>(kAttrFusedGroup, -1);
    groups[group].push_back(node);
  }
  for (const auto& [group, members] : groups) {
    const bool cluster = group >= 0;
    if (cluster)
      out += fmt::format("  subgraph cluster_fused_{} {{\n    label=\"fused group {}\"; style=dashed;\n", group, group);
    for (const Node* node : members) {
      const std::string engine = node->GetAttrOr<std::string>(kAttrEngine, "");
      const int64_t stream = node->GetAttrOr<int64_t>(kAttrStream, -1);
      std::string tooltip = node->GetAttrOr<std::string>(kAttrFxNode, "");
      const std::string source = node->GetAttrOr<std::string>(kAttrSource, "");
      if (!source.empty()) tooltip += (tooltip.empty() ? "" : " @ ") + source;
      out += fmt::format("{}  n{} [label=\"{}\", fillcolor=\"{}\", color=\"{}\"{}{}];\n", cluster ? "  " : "", id[node],
                         NodeLabel(*node), EngineColour(engine, node->type()), StreamColour(stream),
                         stream >= 0 ? ", penwidth=1.5" : "",
                         tooltip.empty() ? "" : fmt::format(", tooltip=\"{}\"", Escape(tooltip)));
    }
    if (cluster) out += "  }\n";
  }
  for (const Node* node : order) {
    for (Value v : node->inputs()) {
      if (!v.valid()) continue;
      out += fmt::format("  n{} -> n{} [label=\"{}\"];\n", id[v.node], id[node],
                         ShapeToString(v.node->output_desc(v.index).shape));
    }
    for (const Node* c : node->control_inputs()) out += fmt::format("  n{} -> n{} [style=dashed];\n", id[c], id[node]);
  }
  out += "}\n";
  return out;
}

}  // namespace ge
