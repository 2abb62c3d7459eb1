// Kafka's ssl.principal.mapping.rules: how the subject of a verified client
// certificate (RFC 2253, "CN=sensor-7,OU=Line 2,O=Plant") becomes the name
// of the principal User:<name> the ACLs see. A comma-separated list, tried
// in order, the first rule that matches wins:
//   DEFAULT                          the whole subject
//   RULE:pattern/replacement/[L|U]   when the Java-style regular expression
//                                    pattern matches the whole subject, the
//                                    subject with every match replaced ($1..
//                                    for groups), optionally lower/upper cased
// e.g. "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT". Parsing follows
// Kafka's SslPrincipalMapper (commas may stand inside a rule's pattern);
// patterns are ECMAScript regular expressions, which agree with Java's for
// the constructs such rules use (groups, classes, lazy quantifiers, anchors).
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "port/status.h"

namespace eddy::security {

class SslPrincipalMapper {
 public:
  // DEFAULT alone.
  SslPrincipalMapper();

  // kInvalidArgument "Invalid rule: ..." as Kafka words it, or a pattern
  // that is not a regular expression.
  static Status parse(const std::string& rules, SslPrincipalMapper* out);

  // The name for a subject; nullopt when no rule applies (Kafka then
  // refuses the connection). A rule whose pattern is too complex to run on
  // the subject does not apply. Never throws.
  std::optional<std::string> name_for(const std::string& subject) const;

 private:
  enum class Case { kAsIs, kLower, kUpper };
  struct Rule {
    bool is_default = true;
    std::regex pattern;
    std::string format;  // the replacement as an ECMAScript format string
    Case letter_case = Case::kAsIs;
  };
  std::vector<Rule> rules_;
};

}  // namespace eddy::security
