#include "app/jaas_config.h"

#include <cctype>

namespace eddy::app {
namespace {

// Reads the JAAS text token by token; a token is a bare word, a quoted
// string, '=' or ';'. Invariant: pos_ is never past the end of text_.
class JaasTokens {
 public:
  explicit JaasTokens(const std::string& text) : text_(text) {}

  enum class Kind { kEnd, kWord, kQuoted, kEquals, kSemicolon };

  // The next token into *value; kInvalidArgument for an unterminated quote.
  Status next(Kind* kind, std::string* value) {
    value->clear();
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == text_.size()) {
      *kind = Kind::kEnd;
      return Status();
    }
    const char c = text_[pos_];
    if (c == '=' || c == ';') {
      ++pos_;
      *kind = c == '=' ? Kind::kEquals : Kind::kSemicolon;
      return Status();
    }
    if (c == '"') return quoted(kind, value);
    while (pos_ < text_.size()) {
      const char w = text_[pos_];
      if (std::isspace(static_cast<unsigned char>(w)) || w == '=' || w == ';' || w == '"') break;
      value->push_back(w);
      ++pos_;
    }
    *kind = Kind::kWord;
    return Status();
  }

 private:
  Status quoted(Kind* kind, std::string* value) {
    ++pos_;  // the opening quote
    while (pos_ < text_.size()) {
      char q = text_[pos_++];
      if (q == '"') {
        *kind = Kind::kQuoted;
        return Status();
      }
      if (q == '\\' && pos_ < text_.size()) q = text_[pos_++];
      value->push_back(q);
    }
    return Status::invalid_argument("a quoted value is not closed (missing '\"')");
  }

  const std::string& text_;
  size_t pos_ = 0;
};

bool is_flag(const std::string& word) {
  return word == "required" || word == "requisite" || word == "sufficient" || word == "optional";
}

// key=value pairs up to the closing ';'.
Status parse_options(JaasTokens* tokens, JaasLoginModule* out) {
  using Kind = JaasTokens::Kind;
  for (;;) {
    Kind kind;
    std::string key;
    if (Status s = tokens->next(&kind, &key); !s.ok()) return s;
    if (kind == Kind::kSemicolon) return Status();
    if (kind != Kind::kWord) return Status::invalid_argument("expected option=value or ';' after the login module");
    std::string value;
    if (Status s = tokens->next(&kind, &value); !s.ok()) return s;
    if (kind != Kind::kEquals) return Status::invalid_argument("option '" + key + "' has no '=value'");
    if (Status s = tokens->next(&kind, &value); !s.ok()) return s;
    if (kind != Kind::kWord && kind != Kind::kQuoted) {
      return Status::invalid_argument("option '" + key + "' has no value");
    }
    if (!out->options.emplace(key, value).second) {
      return Status::invalid_argument("option '" + key + "' is given twice");
    }
  }
}

}  // namespace

Status parse_jaas_config(const std::string& text, JaasLoginModule* out) {
  using Kind = JaasTokens::Kind;
  *out = JaasLoginModule();
  JaasTokens tokens(text);
  Kind kind;
  if (Status s = tokens.next(&kind, &out->module_class); !s.ok()) return s;
  if (kind != Kind::kWord) return Status::invalid_argument("expected a login module class name first");
  if (Status s = tokens.next(&kind, &out->flag); !s.ok()) return s;
  if (kind != Kind::kWord || !is_flag(out->flag)) {
    return Status::invalid_argument("expected a control flag (required, requisite, sufficient, optional) after " +
                                    out->module_class);
  }
  if (Status s = parse_options(&tokens, out); !s.ok()) return s;
  std::string rest;
  if (Status s = tokens.next(&kind, &rest); !s.ok()) return s;
  if (kind != Kind::kEnd) {
    return Status::invalid_argument("more than one login module (a client takes exactly one)");
  }
  return Status();
}

std::string jaas_module_for(const std::string& mechanism) {
  if (mechanism == "PLAIN") return "org.apache.kafka.common.security.plain.PlainLoginModule";
  if (mechanism == "SCRAM-SHA-256" || mechanism == "SCRAM-SHA-512") {
    return "org.apache.kafka.common.security.scram.ScramLoginModule";
  }
  return "";
}

}  // namespace eddy::app
