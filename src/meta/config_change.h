// One change of an IncrementalAlterConfigs request, for topic and broker
// configs alike. APPEND/SUBTRACT on list-valued keys are resolved by the
// caller (who knows the key's type) into a SET of the resulting value.
#pragma once

#include <string>

namespace eddy::meta {

struct ConfigChange {
  enum class Op { kSet, kDelete };
  Op op = Op::kSet;
  std::string key;
  std::string value;  // ignored for kDelete

  static ConfigChange set(std::string key, std::string value) { return {Op::kSet, std::move(key), std::move(value)}; }
  static ConfigChange remove(std::string key) { return {Op::kDelete, std::move(key), std::string()}; }
};

}  // namespace eddy::meta
