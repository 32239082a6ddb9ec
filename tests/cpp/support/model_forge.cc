#include "model_forge.h"

#include <fstream>
#include <iterator>

#include "ge/base/fingerprint.h"
#include "ge/serialize/model_file.h"
#include "ge_model.pb.h"

namespace ge::testing {
namespace {

proto::TensorDef* ExternalConstant(proto::ModelDef& def) {
  for (auto& op : *def.mutable_graph()->mutable_op())
    for (auto& [key, attr] : *op.mutable_attr())
      if (attr.has_tensor() && attr.tensor().has_external()) return attr.mutable_tensor();
  return nullptr;
}

Status Apply(Forgery forgery, proto::ModelDef& def) {
  proto::TensorDef* weight = ExternalConstant(def);
  switch (forgery) {
    case Forgery::kWeightsPath: def.set_weights_file("../../etc/passwd"); break;
    case Forgery::kWeightOffset:
      GE_CHECK(weight != nullptr, "no external constant");
      weight->mutable_external()->set_offset(uint64_t{1} << 40);
      break;
    case Forgery::kWeightShape:
      GE_CHECK(weight != nullptr, "no external constant");
      weight->mutable_desc()->set_shape(0, 1000);
      break;
    case Forgery::kPlanOffset:
      for (auto& task : *def.mutable_plan()->mutable_task())
        for (auto* operands : {task.mutable_output(), task.mutable_workspace()})
          for (auto& operand : *operands)
            if (operand.placement() == "arena") {
              operand.set_offset(operand.offset() + 64);
              return {};
            }
      return NotFound("no task output or workspace in the arena");
    case Forgery::kKernelIr:
      GE_CHECK(def.kernel_size() > 0, "no kernel");
      def.mutable_kernel(0)->set_kernel_ir("kernel evil");
      break;
    case Forgery::kForeignOption: (*def.mutable_compile_option())["ge.kernelCompiler"] = "/tmp/evil"; break;
    case Forgery::kDanglingInput:
      for (auto& op : *def.mutable_graph()->mutable_op())
        if (op.input_size() > 0) {
          op.set_input(0, "nowhere:0");
          return {};
        }
      return NotFound("no op with inputs");
    case Forgery::kMatMulShape:
      for (auto& op : *def.mutable_graph()->mutable_op())
        if (op.type() == "MatMulV2") op.mutable_output_desc(0)->set_shape(1, 7);
      break;
  }
  return {};
}

}  // namespace

Status ForgeModelFile(const std::string& path, Forgery forgery) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  GE_CHECK(static_cast<int64_t>(bytes.size()) > kModelHeaderBytes, "'{}' is not a model file", path);
  proto::ModelDef def;
  GE_CHECK(def.ParseFromString(bytes.substr(kModelHeaderBytes)), "'{}' does not parse", path);
  GE_RETURN_IF_ERROR(Apply(forgery, def));
  const std::string payload = def.SerializeAsString();
  std::string header = bytes.substr(0, kModelHeaderBytes);
  for (int i = 0; i < 8; ++i) header[16 + i] = static_cast<char>((payload.size() >> (8 * i)) & 0xff);
  header.replace(24, 32, Fingerprint(payload));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << header << payload;
  return {};
}

}  // namespace ge::testing
