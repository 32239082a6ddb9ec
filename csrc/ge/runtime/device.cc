#include "ge/runtime/device.h"

#include <map>
#include <mutex>

namespace ge {
namespace {

struct Entry {
  DeviceRegistry::Factory factory;
  std::shared_ptr<Device> instance;  // created on first Get
};

std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}

std::map<std::string, Entry>& Entries() {
  static std::map<std::string, Entry> entries;
  return entries;
}

}  // namespace

void DeviceRegistry::Register(const std::string& name, Factory factory) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  Entries().emplace(name, Entry{std::move(factory), nullptr});
}

Expected<std::shared_ptr<Device>> DeviceRegistry::Get(const std::string& name) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto it = Entries().find(name);
  if (it == Entries().end()) {
    std::string known;
    for (const auto& [n, e] : Entries()) known += (known.empty() ? "" : ", ") + n;
    return NotFound("device '{}' is not registered (registered: {})", name, known.empty() ? "none" : known);
  }
  if (!it->second.instance) it->second.instance = it->second.factory();
  return it->second.instance;
}

std::vector<std::string> DeviceRegistry::Names() {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  std::vector<std::string> names;
  for (const auto& [n, e] : Entries()) names.push_back(n);
  return names;
}

}  // namespace ge
