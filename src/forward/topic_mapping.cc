#include "forward/topic_mapping.h"

namespace eddy::forward {

namespace {

bool compile(const std::string& pattern, std::regex* out, std::string* error) {
  try {
    *out = std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    *error = "invalid regex '" + pattern + "': " + e.what();
    return false;
  }
  return true;
}

bool expand(const std::string& text, const std::string& topic, const std::string& gateway_id,
            const std::string& link, std::string* out, std::string* error) {
  out->clear();
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find("${", i);
    if (open == std::string::npos) {
      out->append(text, i, std::string::npos);
      break;
    }
    out->append(text, i, open - i);
    size_t close = text.find('}', open);
    if (close == std::string::npos) {
      *error = "unterminated ${ in '" + text + "'";
      return false;
    }
    std::string name = text.substr(open + 2, close - open - 2);
    if (name == "topic") {
      out->append(topic);
    } else if (name == "gateway.id") {
      if (gateway_id.empty()) {
        *error = "'" + text + "' uses ${gateway.id} but eddy.gateway.id is not set";
        return false;
      }
      out->append(gateway_id);
    } else if (name == "link") {
      out->append(link);
    } else {
      *error = "unknown placeholder ${" + name + "} in '" + text + "' (known: ${topic}, ${gateway.id}, ${link})";
      return false;
    }
    i = close + 1;
  }
  return true;
}

}  // namespace

bool valid_topic_name(const std::string& name, std::string* why) {
  if (name.empty() || name.size() > 249) {
    *why = "a topic name has 1 to 249 characters";
    return false;
  }
  if (name == "." || name == "..") {
    *why = "'.' and '..' are not topic names";
    return false;
  }
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-';
    if (!ok) {
      *why = "'" + name + "' has a character outside [a-zA-Z0-9._-]";
      return false;
    }
  }
  return true;
}

Status TopicMapping::create(const LinkOptions& options, TopicMapping* out) {
  TopicMapping m;
  std::string why;
  for (const std::string& p : options.topics) {
    std::regex r;
    if (!compile(p, &r, &why)) return Status::invalid_argument(why);
    m.topics_.push_back(std::move(r));
  }
  for (const TopicPriority& p : options.priorities) {
    std::regex r;
    if (!compile(p.pattern, &r, &why)) return Status::invalid_argument(why);
    m.priorities_.emplace_back(std::move(r), p.priority);
  }
  m.template_ = options.remote_topic;
  m.gateway_id_ = options.gateway_id;
  m.link_ = options.name;
  // The template must expand, and give a valid name for a plain topic.
  std::string sample;
  if (!expand(m.template_, "t", m.gateway_id_, m.link_, &sample, &why)) return Status::invalid_argument(why);
  if (!valid_topic_name(sample, &why)) {
    return Status::invalid_argument("'" + m.template_ + "' does not give a valid topic name: " + why);
  }
  *out = std::move(m);
  return Status();
}

bool TopicMapping::forwards(const std::string& local_topic) const {
  for (const std::regex& r : topics_) {
    if (std::regex_match(local_topic, r)) return true;
  }
  return false;
}

std::string TopicMapping::remote_name(const std::string& local_topic, std::string* error) const {
  std::string name;
  if (!expand(template_, local_topic, gateway_id_, link_, &name, error)) return "";
  std::string why;
  if (!valid_topic_name(name, &why)) {
    *error = "remote topic name: " + why;
    return "";
  }
  return name;
}

int32_t TopicMapping::priority(const std::string& local_topic) const {
  for (const auto& [r, priority] : priorities_) {
    if (std::regex_match(local_topic, r)) return priority;
  }
  return 0;
}

}  // namespace eddy::forward
