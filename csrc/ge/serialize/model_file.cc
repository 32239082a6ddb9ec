#include "ge/serialize/model_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include <google/protobuf/stubs/logging.h>

#include "ge/base/fingerprint.h"
#include "ge/serialize/file_io.h"
#include "ge/serialize/graph_proto.h"
#include "ge_model.pb.h"

namespace ge {
namespace {

constexpr int64_t kWeightsAlignment = 64;
constexpr int64_t kMaxPayloadBytes = std::numeric_limits<int32_t>::max();  // protobuf's limit

// Header layout, little-endian: magic[8] | format version u32 | header bytes u32 | payload
// bytes u64 | payload fingerprint (32 hex digits) | 8 reserved zero bytes.
struct HeaderFields {
  uint32_t version = 0;
  uint32_t header_bytes = 0;
  uint64_t payload_bytes = 0;
  std::string checksum;
};

template <typename T>
void PutLittleEndian(T value, std::string* out) {
  for (size_t i = 0; i < sizeof(T); ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

template <typename T>
T GetLittleEndian(const char* p) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<unsigned char>(p[i])) << (8 * i);
  return value;
}

std::string EncodeHeader(const std::string& payload) {
  std::string header(kModelFileMagic, sizeof(kModelFileMagic));
  PutLittleEndian<uint32_t>(kModelFormatVersion, &header);
  PutLittleEndian<uint32_t>(static_cast<uint32_t>(kModelHeaderBytes), &header);
  PutLittleEndian<uint64_t>(payload.size(), &header);
  header += Fingerprint(payload);
  header.resize(static_cast<size_t>(kModelHeaderBytes), '\0');
  return header;
}

Expected<HeaderFields> DecodeHeader(std::string_view bytes) {
  GE_CHECK(static_cast<int64_t>(bytes.size()) >= kModelHeaderBytes,
           "not a torchair_ge model file: {} bytes, shorter than the {}-byte header", bytes.size(), kModelHeaderBytes);
  GE_CHECK(std::memcmp(bytes.data(), kModelFileMagic, sizeof(kModelFileMagic)) == 0,
           "not a torchair_ge model file (the magic is not 'TGEMODEL')");
  HeaderFields h;
  h.version = GetLittleEndian<uint32_t>(bytes.data() + 8);
  h.header_bytes = GetLittleEndian<uint32_t>(bytes.data() + 12);
  h.payload_bytes = GetLittleEndian<uint64_t>(bytes.data() + 16);
  h.checksum.assign(bytes.data() + 24, 32);
  GE_CHECK(h.version == kModelFormatVersion,
           "model file format version {} is not supported by this engine (it reads version {})", h.version,
           kModelFormatVersion);
  GE_CHECK(h.header_bytes == kModelHeaderBytes, "model file header says it is {} bytes, {} expected", h.header_bytes,
           kModelHeaderBytes);
  const uint64_t body = bytes.size() - static_cast<uint64_t>(kModelHeaderBytes);
  GE_CHECK(h.payload_bytes == body,
           "model file is truncated or has trailing bytes: the header says {} payload bytes, "
           "the file holds {}",
           h.payload_bytes, body);
  return h;
}

// A weights file name from the model file: a plain name in the model's directory, never a path.
Status CheckWeightsName(const std::string& name) {
  GE_CHECK(!name.empty() && name.size() <= 255 && name != "." && name != ".." && name.find('/') == std::string::npos &&
               name.find('\0') == std::string::npos,
           "model file names its weights file '{}', which is not a plain file name", name);
  return {};
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

const char* PlacementNames[] = {"arena", "input", "output", "constant", "absent"};

Status CheckPlacement(const std::string& placement, const std::string& where) {
  for (const char* name : PlacementNames)
    if (placement == name) return {};
  return InvalidArgument("{}: unknown placement '{}'", where, placement);
}

void OperandToProto(const ModelOperand& operand, proto::OperandDef* out) {
  out->set_placement(operand.placement);
  out->set_offset(operand.offset);
  out->set_io_index(operand.io_index);
  TensorDescToProto(operand.desc, out->mutable_desc());
}

Expected<ModelOperand> OperandFromProto(const proto::OperandDef& def, const std::string& where) {
  ModelOperand operand;
  GE_RETURN_IF_ERROR(CheckPlacement(def.placement(), where));
  operand.placement = def.placement();
  operand.offset = def.offset();
  operand.io_index = def.io_index();
  GE_ASSIGN_OR_RETURN(operand.desc, TensorDescFromProto(def.desc(), where));
  return operand;
}

void PlanToProto(const ModelPlanDesc& plan, proto::PlanDef* out) {
  out->set_arena_size(plan.arena_size);
  out->set_const_bytes(plan.const_bytes);
  out->set_streams(plan.streams);
  for (const ModelTaskDesc& task : plan.tasks) {
    proto::TaskDescDef* t = out->add_task();
    t->set_name(task.name);
    t->set_type(task.type);
    t->set_engine(task.engine);
    t->set_stream(task.stream);
    for (const ModelOperand& in : task.inputs) OperandToProto(in, t->add_input());
    for (const ModelOperand& o : task.outputs) OperandToProto(o, t->add_output());
    for (const ModelOperand& w : task.workspaces) OperandToProto(w, t->add_workspace());
  }
}

Expected<ModelPlanDesc> PlanFromProto(const proto::PlanDef& def) {
  ModelPlanDesc plan;
  plan.arena_size = def.arena_size();
  plan.const_bytes = def.const_bytes();
  plan.streams = def.streams();
  for (int i = 0; i < def.task_size(); ++i) {
    const proto::TaskDescDef& t = def.task(i);
    ModelTaskDesc task{t.name(), t.type(), t.engine(), t.stream(), {}, {}, {}};
    const std::string where = fmt::format("recorded task {} ('{}')", i, t.name());
    for (int k = 0; k < t.input_size(); ++k) {
      GE_ASSIGN_OR_RETURN(ModelOperand in, OperandFromProto(t.input(k), fmt::format("{} input {}", where, k)));
      task.inputs.push_back(std::move(in));
    }
    for (int k = 0; k < t.output_size(); ++k) {
      GE_ASSIGN_OR_RETURN(ModelOperand o, OperandFromProto(t.output(k), fmt::format("{} output {}", where, k)));
      task.outputs.push_back(std::move(o));
    }
    for (int k = 0; k < t.workspace_size(); ++k) {
      GE_ASSIGN_OR_RETURN(ModelOperand w, OperandFromProto(t.workspace(k), fmt::format("{} workspace {}", where, k)));
      task.workspaces.push_back(std::move(w));
    }
    plan.tasks.push_back(std::move(task));
  }
  return plan;
}

std::optional<std::string> OperandDifference(const ModelOperand& a, const ModelOperand& b) {
  if (a.placement != b.placement) return fmt::format("placement {} vs {}", a.placement, b.placement);
  if (a.offset != b.offset) return fmt::format("offset {} vs {}", a.offset, b.offset);
  if (a.io_index != b.io_index) return fmt::format("io index {} vs {}", a.io_index, b.io_index);
  if (!(a.desc == b.desc)) return fmt::format("{} vs {}", a.desc.ToString(), b.desc.ToString());
  return std::nullopt;
}

std::optional<std::string> OperandsDifference(const std::vector<ModelOperand>& a, const std::vector<ModelOperand>& b,
                                              const char* what) {
  if (a.size() != b.size()) return fmt::format("{} {} vs {}", what, a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k)
    if (auto d = OperandDifference(a[k], b[k])) return fmt::format("{} {}: {}", what, k, *d);
  return std::nullopt;
}

// Constants: inline up to `limit` bytes, otherwise appended (aligned) to `weights`.
ConstantWriter WeightsWriter(int64_t limit, std::string* weights) {
  return [limit, weights](const Tensor& value, proto::TensorDef* out) -> Status {
    GE_CHECK(value.defined(), "constant {} has no bytes", value.desc().ToString());
    if (value.nbytes() <= limit) {
      out->set_data(value.data(), static_cast<size_t>(value.nbytes()));
      return {};
    }
    weights->resize((weights->size() + kWeightsAlignment - 1) / kWeightsAlignment * kWeightsAlignment, '\0');
    out->mutable_external()->set_offset(weights->size());
    out->mutable_external()->set_length(static_cast<uint64_t>(value.nbytes()));
    weights->append(static_cast<const char*>(value.data()), static_cast<size_t>(value.nbytes()));
    return {};
  };
}

ConstantReader WeightsReader(const MappedBytes* weights) {
  return [weights](const TensorDesc& desc, const proto::TensorDef& t, const std::string& where) -> Expected<Tensor> {
    GE_CHECK(!t.data_elided(), "{}: the model file left out this constant's bytes", where);
    if (!t.has_external()) {
      GE_CHECK(static_cast<int64_t>(t.data().size()) == desc.ByteSize(), "{}: constant holds {} bytes, {} expected",
               where, t.data().size(), desc.ByteSize());
      Tensor value = Tensor::Allocate(desc);
      if (!t.data().empty()) std::memcpy(value.data(), t.data().data(), t.data().size());
      return value;
    }
    GE_CHECK(t.data().empty(), "{}: constant has both inline and external bytes", where);
    GE_CHECK(weights->data != nullptr, "{}: constant refers to a weights file, but the model names none", where);
    const uint64_t offset = t.external().offset(), length = t.external().length();
    const uint64_t size = static_cast<uint64_t>(weights->size);
    GE_CHECK(length == static_cast<uint64_t>(desc.ByteSize()), "{}: external constant of {} bytes, {} expected", where,
             length, desc.ByteSize());
    GE_CHECK(offset % kWeightsAlignment == 0 && offset <= size && length <= size - offset,
             "{}: external bytes [{}, +{}) are not an aligned range of the {}-byte weights file", where, offset, length,
             size);
    // Zero-copy: the constant points into the (private, copy-on-write) mapping it keeps alive.
    return Tensor(desc, const_cast<char*>(weights->data) + offset, weights->owner);
  };
}

void SizesToProto(const SizeTemplate& sizes, proto::SizeTemplateDef* out) {
  const std::vector<std::string> names = sizes.SymbolNames();
  for (const SymbolDef& s : sizes.symbols) {
    proto::SymbolDef* def = out->add_symbol();
    def->set_name(s.name);
    def->set_input(s.input);
    def->set_dim(s.dim);
    def->set_min(s.min);
    def->set_max(s.max);
  }
  for (const SizeSite& site : sizes.sites) {
    proto::SizeSiteDef* def = out->add_site();
    def->set_node(site.node);
    def->set_kind(std::string(SizeSiteKindName(site.kind)));
    def->set_attr(site.attr);
    def->set_index(site.index);
    def->set_expr(site.expr.ToString(names));
  }
  for (const SymExpr& guard : sizes.guards) out->add_guard(guard.ToString(names));
}

Expected<SizeTemplate> SizesFromProto(const proto::SizeTemplateDef& def) {
  SizeTemplate sizes;
  for (const proto::SymbolDef& s : def.symbol())
    sizes.symbols.push_back({s.name(), s.input(), s.dim(), s.min(), s.max()});
  const std::vector<std::string> names = sizes.SymbolNames();
  for (const proto::SizeSiteDef& site : def.site()) {
    GE_ASSIGN_OR_RETURN(SizeSiteKind kind, ParseSizeSiteKind(site.kind()));
    GE_ASSIGN_OR_RETURN(SymExpr expr, SymExpr::Parse(site.expr(), names));
    sizes.sites.push_back({site.node(), kind, site.attr(), site.index(), std::move(expr)});
  }
  for (const std::string& guard : def.guard()) {
    GE_ASSIGN_OR_RETURN(SymExpr expr, SymExpr::Parse(guard, names));
    sizes.guards.push_back(std::move(expr));
  }
  return sizes;
}

Expected<ModelFileContents> ContentsFromProto(const proto::ModelDef& def, const MappedBytes& weights) {
  ModelFileContents contents;
  contents.engine_version = def.engine_version();
  GE_CHECK(!contents.engine_version.empty(), "model file records no engine version");
  GE_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, GraphFromProto(def.graph(), WeightsReader(&weights)));
  contents.graph = std::move(graph);
  for (const auto& [key, value] : def.compile_option()) contents.compile_options[key] = value;
  contents.input_names.assign(def.input_name().begin(), def.input_name().end());
  contents.output_names.assign(def.output_name().begin(), def.output_name().end());
  for (const proto::KernelDef& k : def.kernel()) contents.kernels.push_back({k.symbol(), k.kernel_ir()});
  GE_ASSIGN_OR_RETURN(contents.plan, PlanFromProto(def.plan()));
  if (def.has_size_template()) {
    GE_ASSIGN_OR_RETURN(contents.sizes, SizesFromProto(def.size_template()));
    GE_RETURN_IF_ERROR(contents.sizes->Verify(*contents.graph).WithContext("model file's size template"));
    GE_CHECK(contents.kernels.empty() && contents.plan.tasks.empty(),
             "model file with symbolic sizes records kernels or a plan");
  }
  return contents;
}

Status CheckWeights(const proto::ModelDef& def, const MappedBytes& weights) {
  GE_CHECK(weights.size >= 0 && static_cast<uint64_t>(weights.size) == def.weights_size(),
           "weights file '{}' holds {} bytes, the model file says {}", def.weights_file(), weights.size,
           def.weights_size());
  const std::string checksum = Fingerprint(std::string_view(weights.data, static_cast<size_t>(weights.size)));
  GE_CHECK(checksum == def.weights_checksum(), "weights file '{}' is corrupted (checksum {} , the model file says {})",
           def.weights_file(), checksum, def.weights_checksum());
  return {};
}

Expected<MappedBytes> MapFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  GE_CHECK(fd >= 0, "cannot open '{}': {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument("'{}' is not a regular file", path);
  }
  MappedBytes out;
  out.size = static_cast<int64_t>(st.st_size);
  if (out.size == 0) {
    ::close(fd);
    static const char kEmpty = 0;
    out.data = &kEmpty;
    return out;
  }
  // Private and writable: a constant is never written through, but if a kernel did, the file
  // would not change.
  void* p = ::mmap(nullptr, static_cast<size_t>(out.size), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  GE_CHECK(p != MAP_FAILED, "cannot map '{}': {}", path, std::strerror(errno));
  const size_t length = static_cast<size_t>(out.size);
  out.data = static_cast<const char*>(p);
  out.owner = std::shared_ptr<void>(p, [length](void* q) { ::munmap(q, length); });
  return out;
}

}  // namespace

std::optional<std::string> PlanDifference(const ModelPlanDesc& recorded, const ModelPlanDesc& derived) {
  if (recorded.arena_size != derived.arena_size)
    return fmt::format("arena of {} bytes vs {}", recorded.arena_size, derived.arena_size);
  if (recorded.const_bytes != derived.const_bytes)
    return fmt::format("{} constant bytes vs {}", recorded.const_bytes, derived.const_bytes);
  if (recorded.streams != derived.streams) return fmt::format("{} streams vs {}", recorded.streams, derived.streams);
  if (recorded.tasks.size() != derived.tasks.size())
    return fmt::format("{} tasks vs {}", recorded.tasks.size(), derived.tasks.size());
  for (size_t i = 0; i < recorded.tasks.size(); ++i) {
    const ModelTaskDesc& a = recorded.tasks[i];
    const ModelTaskDesc& b = derived.tasks[i];
    const std::string where = fmt::format("task {} ({} '{}')", i, a.type, a.name);
    if (a.name != b.name || a.type != b.type || a.engine != b.engine || a.stream != b.stream)
      return fmt::format("{}: {} '{}' on {} stream {} vs {} '{}' on {} stream {}", where, a.type, a.name, a.engine,
                         a.stream, b.type, b.name, b.engine, b.stream);
    if (auto d = OperandsDifference(a.inputs, b.inputs, "input")) return fmt::format("{}: {}", where, *d);
    if (auto d = OperandsDifference(a.outputs, b.outputs, "output")) return fmt::format("{}: {}", where, *d);
    if (auto d = OperandsDifference(a.workspaces, b.workspaces, "workspace")) return fmt::format("{}: {}", where, *d);
  }
  return std::nullopt;
}

namespace {

// The ModelDef of `contents`; constants above `inline_limit` bytes are appended to `weights`.
Expected<proto::ModelDef> ModelToProto(const ModelFileContents& contents, int64_t inline_limit, std::string* weights) {
  GE_CHECK(contents.graph != nullptr, "model file: no graph");
  proto::ModelDef def;
  def.set_engine_version(contents.engine_version);
  GE_ASSIGN_OR_RETURN(*def.mutable_graph(), GraphToProto(*contents.graph, WeightsWriter(inline_limit, weights)));
  for (const auto& [key, value] : contents.compile_options) (*def.mutable_compile_option())[key] = value;
  for (const std::string& name : contents.input_names) def.add_input_name(name);
  for (const std::string& name : contents.output_names) def.add_output_name(name);
  for (const ModelKernelDesc& k : contents.kernels) {
    proto::KernelDef* kernel = def.add_kernel();
    kernel->set_symbol(k.symbol);
    kernel->set_kernel_ir(k.kernel_ir);
  }
  PlanToProto(contents.plan, def.mutable_plan());
  if (contents.sizes) SizesToProto(*contents.sizes, def.mutable_size_template());
  return def;
}

Expected<std::string> EncodeWithHeader(const proto::ModelDef& def, const std::string& name) {
  std::string payload;
  GE_CHECK(def.ByteSizeLong() <= static_cast<size_t>(kMaxPayloadBytes) && def.SerializeToString(&payload),
           "model '{}' does not fit a model file ({} bytes of graph and inline constants)", name, def.ByteSizeLong());
  return EncodeHeader(payload) + payload;
}

}  // namespace

Status WriteModelFile(const std::string& path, const ModelFileContents& contents, int64_t inline_limit) {
  std::string weights;
  GE_ASSIGN_OR_RETURN(proto::ModelDef def, ModelToProto(contents, inline_limit, &weights));
  if (!weights.empty()) {
    const std::string weights_path = path + ".weights";
    def.set_weights_file(BaseName(weights_path));
    def.set_weights_size(weights.size());
    def.set_weights_checksum(Fingerprint(weights));
    GE_RETURN_IF_ERROR(WriteFileAtomic(weights_path, weights));
  }
  GE_ASSIGN_OR_RETURN(std::string bytes, EncodeWithHeader(def, contents.graph->name()));
  return WriteFileAtomic(path, bytes);
}

Expected<std::string> EncodeModelFile(const ModelFileContents& contents) {
  std::string weights;
  GE_ASSIGN_OR_RETURN(proto::ModelDef def, ModelToProto(contents, std::numeric_limits<int64_t>::max(), &weights));
  return EncodeWithHeader(def, contents.graph->name());
}

Expected<ModelFileContents> ParseModelFile(std::string_view bytes, const WeightsOpener& open_weights) {
  GE_ASSIGN_OR_RETURN(HeaderFields header, DecodeHeader(bytes));
  const std::string_view payload = bytes.substr(static_cast<size_t>(kModelHeaderBytes));
  GE_CHECK(Fingerprint(payload) == header.checksum,
           "model file is corrupted: its checksum does not match its contents");
  return ParseModelPayload(payload, open_weights);
}

Expected<ModelFileContents> ParseModelPayload(std::string_view payload, const WeightsOpener& open_weights) {
  GE_CHECK(payload.size() <= static_cast<size_t>(kMaxPayloadBytes), "model payload of {} bytes is too large",
           payload.size());
  proto::ModelDef def;
  {
    // A malformed payload is our error to report, once and clearly: protobuf's own log lines
    // (one per bad string field) would precede it on stderr.
    google::protobuf::LogSilencer quiet;
    GE_CHECK(def.ParseFromArray(payload.data(), static_cast<int>(payload.size())),
             "model file payload does not parse as ge.proto.ModelDef");
  }
  MappedBytes weights;
  if (!def.weights_file().empty()) {
    GE_RETURN_IF_ERROR(CheckWeightsName(def.weights_file()));
    GE_ASSIGN_OR_RETURN(weights, open_weights(def.weights_file()));
    GE_RETURN_IF_ERROR(CheckWeights(def, weights));
  }
  return ContentsFromProto(def, weights);
}

Expected<ModelFileContents> ReadModelFile(const std::string& path) {
  GE_ASSIGN_OR_RETURN(MappedBytes file, MapFile(path));
  const std::string dir = DirName(path);
  auto contents = ParseModelFile(std::string_view(file.data, static_cast<size_t>(file.size)),
                                 [&dir](const std::string& name) { return MapFile(dir + "/" + name); });
  if (!contents.ok()) return contents.status().WithContext(fmt::format("reading model file '{}'", path));
  return contents;
}

}  // namespace ge
