#include "ge/ops/op_plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cctype>
#include <cstring>
#include <map>
#include <mutex>

namespace ge {
namespace {

std::mutex& PluginMutex() {
  static std::mutex mu;
  return mu;
}

std::map<std::string, PluginKernel>& Kernels() {
  static auto* kernels = new std::map<std::string, PluginKernel>();
  return *kernels;
}

std::map<std::string, std::vector<std::string>>& LoadedLibraries() {  // real path -> op types
  static auto* loaded = new std::map<std::string, std::vector<std::string>>();
  return *loaded;
}

const AttrMap& Attrs(const TgeAttrs* attrs) { return *reinterpret_cast<const AttrMap*>(attrs); }

template <typename T>
const T* Find(const TgeAttrs* attrs, const char* name) {
  if (attrs == nullptr || name == nullptr) return nullptr;
  auto it = Attrs(attrs).find(name);
  return it == Attrs(attrs).end() ? nullptr : std::get_if<T>(&it->second);
}

const TgeApi kApi = {
    [](const TgeAttrs* a, const char* name, int64_t* value) {
      const auto* v = Find<int64_t>(a, name);
      return v ? (*value = *v, 0) : 1;
    },
    [](const TgeAttrs* a, const char* name, double* value) {
      const auto* v = Find<double>(a, name);
      return v ? (*value = *v, 0) : 1;
    },
    [](const TgeAttrs* a, const char* name, int* value) {
      const auto* v = Find<bool>(a, name);
      return v ? (*value = *v ? 1 : 0, 0) : 1;
    },
    [](const TgeAttrs* a, const char* name, const char** value) {
      const auto* v = Find<std::string>(a, name);
      return v ? (*value = v->c_str(), 0) : 1;
    },
    [](const TgeAttrs* a, const char* name, const int64_t** values, int64_t* count) {
      const auto* v = Find<std::vector<int64_t>>(a, name);
      if (!v) return 1;
      *values = v->data();
      *count = static_cast<int64_t>(v->size());
      return 0;
    },
    [](const TgeAttrs* a, const char* name, const double** values, int64_t* count) {
      const auto* v = Find<std::vector<double>>(a, name);
      if (!v) return 1;
      *values = v->data();
      *count = static_cast<int64_t>(v->size());
      return 0;
    },
};

std::vector<std::string> SplitNames(const char* text) {
  std::vector<std::string> out;
  if (text == nullptr) return out;
  std::string s(text), item;
  for (char c : s + ",") {
    if (c == ',') {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else if (c != ' ') {
      item += c;
    }
  }
  return out;
}

bool IsIdentifier(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return !std::isdigit(static_cast<unsigned char>(name[0]));
}

Expected<AttrType> PluginAttrType(const std::string& name) {
  static const std::map<std::string, AttrType> kTypes = {
      {"int", AttrType::kInt},       {"float", AttrType::kFloat},      {"bool", AttrType::kBool},
      {"string", AttrType::kString}, {"list_int", AttrType::kListInt}, {"list_float", AttrType::kListFloat}};
  auto it = kTypes.find(name);
  if (it == kTypes.end())
    return InvalidArgument("attr type '{}' (int, float, bool, string, list_int, list_float)", name);
  return it->second;
}

// The prototype's InferShape: the plugin's callback over plain descs.
Status InferWithPlugin(InferContext& ctx, TgeInferFn infer, int num_inputs, int num_outputs) {
  std::vector<TgeTensorDesc> inputs(static_cast<size_t>(num_inputs));
  for (int i = 0; i < num_inputs; ++i) {
    TgeTensorDesc& d = inputs[static_cast<size_t>(i)];
    std::memset(&d, 0, sizeof(d));
    if (!ctx.HasInput(i)) {
      d.dtype = -1;
      d.rank = -1;
      continue;
    }
    const TensorDesc& in = ctx.Input(i);
    if (in.shape.size() > TGE_MAX_RANK)
      return ctx.Error("input {} has rank {} (plugins take up to {})", i, in.shape.size(), TGE_MAX_RANK);
    d.dtype = static_cast<int32_t>(in.dtype);
    d.rank = static_cast<int32_t>(in.shape.size());
    for (size_t k = 0; k < in.shape.size(); ++k) d.shape[k] = in.shape[k];
  }
  std::vector<TgeTensorDesc> outputs(static_cast<size_t>(num_outputs));
  for (auto& d : outputs) {
    std::memset(&d, 0, sizeof(d));
    d.dtype = -1;
    d.rank = -1;
  }
  char error[512] = {0};
  if (infer(inputs.data(), num_inputs, AsPluginAttrs(ctx.node().attrs()), &kApi, outputs.data(), num_outputs, error,
            sizeof(error)) != 0) {
    error[sizeof(error) - 1] = '\0';
    return ctx.Error("{}", error[0] ? error : "the plugin's shape inference failed");
  }
  for (int o = 0; o < num_outputs; ++o) {
    const TgeTensorDesc& d = outputs[static_cast<size_t>(o)];
    if (d.rank < 0 || d.rank > TGE_MAX_RANK) return ctx.Error("the plugin set output {} to rank {}", o, d.rank);
    if (DataTypeSize(static_cast<DataType>(d.dtype)) == 0 ||
        DataTypeName(static_cast<DataType>(d.dtype)) == "DT_UNDEFINED")
      return ctx.Error("the plugin set output {} to unknown dtype {}", o, d.dtype);
    Shape shape;
    for (int k = 0; k < d.rank; ++k) {
      if (d.shape[k] < 0) return ctx.Error("the plugin set output {} dim {} to {}", o, k, d.shape[k]);
      shape.push_back(d.shape[k]);
    }
    ctx.Output(o).dtype = static_cast<DataType>(d.dtype);
    ctx.Output(o).SetShape(std::move(shape));
  }
  return {};
}

struct LoadState {
  std::string library;
  std::vector<std::string> types;
  std::string error;
};

Status RegisterPluginOp(const std::string& library, const TgeOpDef* def) {
  GE_ASSIGN_OR_RETURN(OpProto proto, PluginOpProto(library, def));
  GE_RETURN_IF_ERROR(OpRegistry::Global().Register(std::move(proto)));
  Kernels()[def->type] = PluginKernel{def->compute, library};
  return {};
}

int RegisterFromPlugin(const TgeRegistrar* registrar, const TgeOpDef* def) {
  auto* state = static_cast<LoadState*>(registrar->context);
  Status status = RegisterPluginOp(state->library, def);
  if (!status.ok()) {
    if (state->error.empty()) state->error = status.message();
    return 1;
  }
  state->types.push_back(def->type);
  return 0;
}

}  // namespace

Expected<OpProto> PluginOpProto(const std::string& library, const TgeOpDef* def) {
  GE_CHECK(def != nullptr && def->type != nullptr, "an op definition without a type");
  const std::string type = def->type;
  GE_CHECK(IsIdentifier(type), "op type '{}' is not an identifier", type);
  GE_CHECK(def->infer != nullptr && def->compute != nullptr, "op {}: infer and compute are both required", type);
  OpDef op(type);
  op.TypeVar("T", dtypes::kAll, /*per_value=*/true);
  const auto inputs = SplitNames(def->inputs);
  for (std::string name : inputs) {
    const bool optional = !name.empty() && name.back() == '?';
    if (optional) name.pop_back();
    GE_CHECK(IsIdentifier(name), "op {}: input name '{}' is not an identifier", type, name);
    if (optional)
      op.OptionalInput(name, "T");
    else
      op.Input(name, "T");
  }
  const auto outputs = SplitNames(def->outputs);
  GE_CHECK(!outputs.empty(), "op {}: no outputs", type);
  for (const std::string& name : outputs) {
    GE_CHECK(IsIdentifier(name), "op {}: output name '{}' is not an identifier", type, name);
    op.Output(name, "T");
  }
  for (const std::string& item : SplitNames(def->attrs)) {
    const size_t colon = item.find(':');
    GE_CHECK(colon != std::string::npos, "op {}: attr '{}' is not name:type", type, item);
    const std::string name = item.substr(0, colon);
    GE_CHECK(IsIdentifier(name), "op {}: attr name '{}' is not an identifier", type, name);
    auto attr_type = PluginAttrType(item.substr(colon + 1));
    if (!attr_type.ok()) return attr_type.status().WithContext(fmt::format("op {} attr '{}'", type, name));
    op.Attr(name, *attr_type);
  }
  op.Infer([infer = def->infer, n_in = static_cast<int>(inputs.size()), n_out = static_cast<int>(outputs.size())](
               InferContext& ctx) { return InferWithPlugin(ctx, infer, n_in, n_out); });
  op.Doc(fmt::format("{} (op plugin {})", def->doc ? def->doc : "", library));
  return op.Build();
}

Expected<std::vector<std::string>> LoadOpPlugin(const std::string& path) {
  std::lock_guard<std::mutex> lock(PluginMutex());
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) return NotFound("op plugin '{}': no such file", path);
  const std::string library = resolved;
  if (auto it = LoadedLibraries().find(library); it != LoadedLibraries().end()) return it->second;
  // Kept loaded for the process: registered ops point into it.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return InvalidArgument("op plugin '{}': {}", library, dlerror());
  using InitFn = int (*)(const TgeRegistrar*);
  auto init = reinterpret_cast<InitFn>(dlsym(handle, "torchair_ge_op_plugin_init"));
  if (init == nullptr) return InvalidArgument("op plugin '{}' does not export torchair_ge_op_plugin_init", library);
  LoadState state{library, {}, {}};
  const TgeRegistrar registrar{TGE_OP_PLUGIN_ABI_VERSION, &RegisterFromPlugin, &state};
  const int rc = init(&registrar);
  if (!state.error.empty()) return InvalidArgument("op plugin '{}': {}", library, state.error);
  if (rc != 0) return InvalidArgument("op plugin '{}': torchair_ge_op_plugin_init returned {}", library, rc);
  LoadedLibraries()[library] = state.types;
  return state.types;
}

const PluginKernel* FindPluginKernel(const std::string& type) {
  std::lock_guard<std::mutex> lock(PluginMutex());
  auto it = Kernels().find(type);
  return it == Kernels().end() ? nullptr : &it->second;
}

const TgeApi& PluginApi() { return kApi; }

}  // namespace ge
