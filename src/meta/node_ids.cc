#include "meta/node_ids.h"

namespace eddy::meta {

std::string join_node_ids(const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) {
    if (!out.empty()) out += ',';
    out += std::to_string(id);
  }
  return out;
}

Status split_node_ids(const std::string& text, const char* what, std::vector<int32_t>* out) {
  out->clear();
  if (!text.empty() && text.back() == ',') {
    return Status::corruption(std::string(what) + ": bad node id list '" + text + "'");
  }
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(at, end - at);
    if (part.empty() || part.size() > 10 || part.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(part) > INT32_MAX) {
      return Status::corruption(std::string(what) + ": bad node id list '" + text + "'");
    }
    out->push_back(static_cast<int32_t>(std::stoll(part)));
    at = end + 1;
  }
  return Status();
}

}  // namespace eddy::meta
