#include "security/ssl_principal_mapper.h"

#include <algorithm>
#include <cctype>

namespace eddy::security {
namespace {

// Kafka's RULE_PATTERN: DEFAULT, a RULE, or anything else (then invalid).
constexpr char kRulePattern[] = R"((DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?))";

// Java's replacement syntax into ECMAScript's format: "\x" is x literally,
// "$n" a group, where a number above the group count loses digits from the
// right until it names one (Kafka's escapeLiteralBackReferences) and a
// reference to no group at all stays literal text.
std::string format_from_java(const std::string& replacement, size_t groups) {
  std::string out;
  for (size_t i = 0; i < replacement.size(); ++i) {
    const char c = replacement[i];
    if (c == '\\' && i + 1 < replacement.size()) {
      const char next = replacement[++i];
      out += next == '$' ? std::string("$$") : std::string(1, next);
      continue;
    }
    if (c != '$' || i + 1 >= replacement.size() || !std::isdigit(static_cast<unsigned char>(replacement[i + 1]))) {
      out += c == '$' ? std::string("$$") : std::string(1, c);
      continue;
    }
    size_t end = i + 1;
    while (end < replacement.size() && std::isdigit(static_cast<unsigned char>(replacement[end]))) ++end;
    std::string digits = replacement.substr(i + 1, end - i - 1);
    // A regex has fewer than 10^9 groups: longer numbers lose digits first
    // (and never overflow the conversion).
    size_t used = std::min<size_t>(digits.size(), 9);
    while (used > 1 && std::stoul(digits.substr(0, used)) > groups) --used;
    const size_t group = std::stoul(digits.substr(0, used));
    if (group == 0) {
      out += "$&";  // Java's $0: the whole match
    } else if (group <= groups && group <= 99) {
      // Two digits ($01..$99), so that a literal digit may follow.
      out += "$" + std::string(group < 10 ? "0" : "") + std::to_string(group);
    } else {
      out += "$$" + digits.substr(0, used);
    }
    out += digits.substr(used);
    i = end - 1;
  }
  return out;
}

}  // namespace

SslPrincipalMapper::SslPrincipalMapper() { rules_.push_back(Rule{}); }

Status SslPrincipalMapper::parse(const std::string& text, SslPrincipalMapper* out) {
  static const std::regex splitter(std::string(R"(\s*()") + kRulePattern + R"()\s*(,\s*|$))");
  static const std::regex parser(kRulePattern);
  std::vector<Rule> rules;
  const size_t first = text.find_first_not_of(" \t\r\n");
  const size_t last = text.find_last_not_of(" \t\r\n");
  const std::string trimmed = first == std::string::npos ? std::string("DEFAULT") : text.substr(first, last - first + 1);
  for (auto it = std::sregex_iterator(trimmed.begin(), trimmed.end(), splitter); it != std::sregex_iterator(); ++it) {
    const std::string rule = (*it)[1].str();
    std::smatch m;
    if (!std::regex_search(rule, m, parser, std::regex_constants::match_continuous)) {
      return Status::invalid_argument("Invalid rule: " + rule);
    }
    if (static_cast<size_t>(m.length(0)) != rule.size()) {
      return Status::invalid_argument("Invalid rule: `" + rule + "`, unmatched substring: `" +
                                      rule.substr(static_cast<size_t>(m.length(0))) + "`");
    }
    if (m[1].matched) {
      rules.push_back(Rule{});
    } else if (m[2].matched) {
      Rule r;
      r.is_default = false;
      try {
        r.pattern = std::regex(m[2].str());
      } catch (const std::regex_error& e) {
        return Status::invalid_argument("Invalid rule: `" + rule + "`: the pattern is not a regular expression (" +
                                        e.what() + ")");
      }
      r.format = format_from_java(m[4].str(), r.pattern.mark_count());
      r.letter_case = m[6].str() == "L" ? Case::kLower : m[6].str() == "U" ? Case::kUpper : Case::kAsIs;
      rules.push_back(std::move(r));
    }
    // An empty rule (nothing between two commas) is ignored, as in Kafka.
  }
  out->rules_ = std::move(rules);
  return Status();
}

std::optional<std::string> SslPrincipalMapper::name_for(const std::string& subject) const {
  for (const Rule& rule : rules_) {
    if (rule.is_default) return subject;
    std::string name;
    try {
      if (!std::regex_match(subject, rule.pattern)) continue;
      name = std::regex_replace(subject, rule.pattern, rule.format);
    } catch (const std::regex_error&) {
      continue;  // too complex for this subject (error_complexity / error_stack): not a match
    }
    for (char& c : name) {
      if (rule.letter_case == Case::kLower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (rule.letter_case == Case::kUpper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return name;
  }
  return std::nullopt;
}

}  // namespace eddy::security
