// ge_run: loads a model file (torchair_ge.dynamo_export, ge::ExportModel) and runs it, with no
// Python. Links the engine and the CPU device only.
//
//   ge_run MODEL                                  prints the model's inputs and outputs
//   ge_run MODEL --inputs a.npy b.npy [--outputs DIR] [--repeat N] [--option KEY=VALUE]...
//
// Outputs are written as DIR/output_<k>.npy; --repeat N times N more runs and prints the median
// and 90th percentile latency.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "devices/cpu/cpu_device.h"
#include "ge/offline_model.h"
#include "ge/serialize/file_io.h"
#include "ge/serialize/npy.h"
#include "ge/session.h"

namespace {

struct Args {
  std::string model;
  std::vector<std::string> inputs;
  std::string outputs;
  int repeat = 0;
  ge::Options options;
};

constexpr const char* kUsage =
    "usage: ge_run MODEL [--inputs A.npy ...] [--outputs DIR] [--repeat N] [--option KEY=VALUE]...\n";

ge::Expected<Args> ParseArgs(int argc, char** argv) {
  Args args;
  std::vector<std::string>* list = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--inputs") {
      list = &args.inputs;
    } else if (a == "--outputs" && has_value) {
      args.outputs = argv[++i], list = nullptr;
    } else if (a == "--repeat" && has_value) {
      const std::string n = argv[++i];
      GE_CHECK(!n.empty() && n.size() < 9 && n.find_first_not_of("0123456789") == std::string::npos,
               "--repeat takes a count, got '{}'", n);
      args.repeat = std::atoi(n.c_str()), list = nullptr;
    } else if (a == "--option" && has_value) {
      const std::string kv = argv[++i];
      const size_t eq = kv.find('=');
      GE_CHECK(eq != std::string::npos && eq > 0, "--option takes KEY=VALUE, got '{}'", kv);
      args.options[kv.substr(0, eq)] = kv.substr(eq + 1), list = nullptr;
    } else if (a.rfind("--", 0) == 0) {
      return ge::InvalidArgument("unknown or incomplete argument '{}'\n{}", a, kUsage);
    } else if (list != nullptr) {
      list->push_back(a);
    } else if (args.model.empty()) {
      args.model = a;
    } else {
      return ge::InvalidArgument("unexpected argument '{}'\n{}", a, kUsage);
    }
  }
  GE_CHECK(!args.model.empty(), "{}", kUsage);
  return args;
}

ge::Expected<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  GE_CHECK(in.good(), "cannot open '{}'", path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string NameOf(const std::vector<std::string>& names, size_t k, const char* what) {
  return k < names.size() && !names[k].empty() ? names[k] : fmt::format("{}{}", what, k);
}

void PrintSignature(const ge::OfflineModel& model) {
  std::printf("inputs:\n");
  for (size_t k = 0; k < model.input_descs().size(); ++k)
    std::printf("  %zu %s %s\n", k, NameOf(model.input_names(), k, "input").c_str(),
                model.input_descs()[k].ToString().c_str());
  std::printf("outputs:\n");
  for (size_t k = 0; k < model.output_descs().size(); ++k)
    std::printf("  %zu %s %s\n", k, NameOf(model.output_names(), k, "output").c_str(),
                model.output_descs()[k].ToString().c_str());
}

ge::Expected<std::vector<ge::Tensor>> ReadInputs(const Args& args, const ge::OfflineModel& model) {
  GE_CHECK(args.inputs.size() == model.input_descs().size(), "the model takes {} inputs, {} .npy files given",
           model.input_descs().size(), args.inputs.size());
  std::vector<ge::Tensor> inputs;
  for (const std::string& path : args.inputs) {
    GE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
    auto tensor = ge::DecodeNpy(bytes);
    if (!tensor.ok()) return tensor.status().WithContext(fmt::format("input '{}'", path));
    inputs.push_back(std::move(tensor).value());
  }
  return inputs;
}

ge::Status WriteOutputs(const std::string& dir, const std::vector<ge::Tensor>& outputs) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    GE_ASSIGN_OR_RETURN(std::string npy, ge::EncodeNpy(outputs[k].desc(), outputs[k].data()));
    GE_RETURN_IF_ERROR(ge::WriteFileAtomic(fmt::format("{}/output_{}.npy", dir, k), npy));
  }
  return {};
}

ge::Status Time(const ge::OfflineModel& model, const std::vector<ge::Tensor>& inputs, int repeat) {
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    std::vector<ge::Tensor> outputs;
    const auto start = std::chrono::steady_clock::now();
    GE_RETURN_IF_ERROR(model.Run(inputs, &outputs));
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("latency over %d runs: median %.3f ms, p90 %.3f ms\n", repeat, ms[ms.size() / 2],
              ms[std::min(ms.size() - 1, ms.size() * 9 / 10)]);
  return {};
}

ge::Status Main(int argc, char** argv) {
  GE_ASSIGN_OR_RETURN(Args args, ParseArgs(argc, argv));
  ge::cpu::RegisterCpuDevice();
  GE_RETURN_IF_ERROR(ge::GEInitialize());
  GE_ASSIGN_OR_RETURN(auto model, ge::LoadModel(args.model, args.options));
  if (model->dynamic()) {
    std::printf("loaded %s in %.1f ms (symbolic sizes: an instance is compiled per set of sizes)\n", args.model.c_str(),
                model->load_ms());
    for (const std::string& symbol : model->DescribeSymbols()) std::printf("  %s\n", symbol.c_str());
  } else {
    std::printf("loaded %s in %.1f ms (%zu tasks, plan %s)\n", args.model.c_str(), model->load_ms(),
                model->model()->tasks.size(), model->plan_checked() ? "checked" : "derived again");
  }
  if (args.inputs.empty()) {
    PrintSignature(*model);
    return {};
  }
  GE_ASSIGN_OR_RETURN(std::vector<ge::Tensor> inputs, ReadInputs(args, *model));
  std::vector<ge::Tensor> outputs;
  GE_RETURN_IF_ERROR(model->Run(inputs, &outputs));
  if (!args.outputs.empty()) {
    GE_RETURN_IF_ERROR(WriteOutputs(args.outputs, outputs));
    std::printf("wrote %zu outputs to %s\n", outputs.size(), args.outputs.c_str());
  }
  if (args.repeat > 0) GE_RETURN_IF_ERROR(Time(*model, inputs, args.repeat));
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  const ge::Status status = Main(argc, argv);
  if (status.ok()) return 0;
  std::fprintf(stderr, "ge_run: %s\n", status.ToString().c_str());
  return 1;
}
