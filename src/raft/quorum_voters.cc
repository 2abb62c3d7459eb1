#include "raft/quorum_voters.h"

#include <algorithm>
#include <charconv>
#include <string>

namespace eddy::raft {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Status parse_voter(std::string_view entry, QuorumVoter* out) {
  const size_t at = entry.find('@');
  auto bad = [&](const char* why) {
    return Status::invalid_argument("'" + std::string(entry) + "': " + why + " (expected id@host:port)");
  };
  if (at == std::string_view::npos) return bad("no '@'");
  std::string_view id = entry.substr(0, at);
  int64_t value = -1;
  auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), value);
  if (id.empty() || ec != std::errc() || end != id.data() + id.size() || value < 0 || value > INT32_MAX) {
    return bad("the node id must be a number from 0 to 2147483647");
  }
  out->id = static_cast<NodeId>(value);
  Status s = client::parse_broker_address(entry.substr(at + 1), &out->address);
  return s.ok() ? s : bad(s.message().c_str());
}

}  // namespace

Status parse_quorum_voters(std::string_view text, std::vector<QuorumVoter>* out) {
  out->clear();
  if (trim(text).empty()) return Status();
  while (true) {
    const size_t comma = text.find(',');
    std::string_view entry = trim(text.substr(0, comma));
    QuorumVoter voter;
    if (Status s = parse_voter(entry, &voter); !s.ok()) return s;
    auto same = [&](const QuorumVoter& v) { return v.id == voter.id; };
    if (std::any_of(out->begin(), out->end(), same)) {
      return Status::invalid_argument("node id " + std::to_string(voter.id) + " is named twice");
    }
    out->push_back(std::move(voter));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return Status();
}

}  // namespace eddy::raft
