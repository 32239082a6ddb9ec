#include "ge/serialize/graph_dump.h"

#include <filesystem>

#include "ge/serialize/dot_export.h"
#include "ge/serialize/file_io.h"
#include "ge/serialize/onnx_export.h"
#include "ge/serialize/py_export.h"

namespace ge {
namespace {

constexpr DumpFormat kAllFormats[] = {DumpFormat::kTxt, DumpFormat::kOnnx, DumpFormat::kPbtxt, DumpFormat::kPy,
                                      DumpFormat::kDot};

}  // namespace

std::string_view DumpFormatName(DumpFormat format) {
  switch (format) {
    case DumpFormat::kTxt: return "txt";
    case DumpFormat::kOnnx: return "onnx";
    case DumpFormat::kPbtxt: return "pbtxt";
    case DumpFormat::kPy: return "py";
    case DumpFormat::kDot: return "dot";
  }
  return "?";
}

Expected<DumpFormat> ParseDumpFormat(std::string_view name) {
  for (DumpFormat f : kAllFormats)
    if (DumpFormatName(f) == name) return f;
  return InvalidArgument("graph dump format '{}' is not supported (supported: txt, onnx, pbtxt, py, dot)", name);
}

Expected<std::vector<DumpFormat>> ParseDumpFormats(std::string_view names) {
  std::vector<DumpFormat> out;
  size_t start = 0;
  while (start <= names.size()) {
    const size_t comma = std::min(names.find(',', start), names.size());
    GE_ASSIGN_OR_RETURN(DumpFormat f, ParseDumpFormat(names.substr(start, comma - start)));
    GE_CHECK(std::find(out.begin(), out.end(), f) == out.end(), "graph dump format '{}' is listed twice",
             DumpFormatName(f));
    out.push_back(f);
    start = comma + 1;
  }
  return out;
}

Expected<std::string> DumpGraph(const Graph& graph, DumpFormat format, const std::string& dir,
                                const std::string& stem) {
  const std::string path = UniqueFilePath(dir, stem, std::string(DumpFormatName(format)));
  std::string contents;
  switch (format) {
    case DumpFormat::kTxt: {
      GE_ASSIGN_OR_RETURN(contents, GraphToText(graph));
      break;
    }
    case DumpFormat::kOnnx: {
      GE_ASSIGN_OR_RETURN(contents, GraphToOnnx(graph));
      break;
    }
    case DumpFormat::kPbtxt: {
      GE_ASSIGN_OR_RETURN(contents, GraphToOnnxText(graph));
      break;
    }
    case DumpFormat::kDot: {
      GE_ASSIGN_OR_RETURN(contents, GraphToDot(graph));
      break;
    }
    case DumpFormat::kPy: {
      const std::filesystem::path script(path);
      const std::string sidecar = script.stem().string() + ".bin";
      GE_ASSIGN_OR_RETURN(PyDump dump, GraphToPython(graph, sidecar));
      if (!dump.sidecar.empty())
        GE_RETURN_IF_ERROR(WriteFileAtomic((script.parent_path() / sidecar).string(), dump.sidecar));
      contents = std::move(dump.script);
      break;
    }
  }
  GE_RETURN_IF_ERROR(WriteFileAtomic(path, contents));
  return path;
}

}  // namespace ge
