#include "app/authorizer_config.h"

#include <string>

namespace eddy::app {
namespace {

std::string trimmed(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

// Each ';'-separated entry, blanks trimmed, must be "Type:name".
Status check_super_users(const std::string& value) {
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(';', start);
    if (end == std::string::npos) end = value.size();
    const std::string entry = trimmed(value.substr(start, end - start));
    const size_t colon = entry.find(':');
    if (!entry.empty() && (colon == std::string::npos || colon == 0 || colon + 1 == entry.size())) {
      return Status::invalid_argument("'" + entry + "' is not a principal of the form User:<name>");
    }
    start = end + 1;
  }
  return Status();
}

}  // namespace

Status authorizer_from(const Config& config, broker::AuthorizerOptions* out) {
  const std::string name = trimmed(config.get_string("authorizer.class.name"));
  if (!name.empty() && name != kStandardAuthorizerClass && name != kAclAuthorizerClass) {
    return Status::invalid_argument(config.origin("authorizer.class.name") + ": authorizer.class.name: '" + name +
                                    "' is not an authorizer Eddy has (use " + kStandardAuthorizerClass +
                                    ", or leave it empty for none)");
  }
  const std::string super_users = config.get_string("super.users");
  if (Status s = check_super_users(super_users); !s.ok()) {
    return Status::invalid_argument(config.origin("super.users") + ": super.users: " + s.message());
  }
  out->enabled = !name.empty();
  out->super_users = super_users;
  out->allow_everyone_if_no_acl_found = config.get_bool("allow.everyone.if.no.acl.found");
  return Status();
}

}  // namespace eddy::app
