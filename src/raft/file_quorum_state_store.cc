#include <charconv>
#include <string_view>

#include "port/port.h"
#include "port/replace_file.h"
#include "raft/quorum_state_store.h"

namespace eddy::raft {
namespace {

constexpr std::string_view kFileName = "quorum-state";
constexpr std::string_view kHeader = "eddy-raft-quorum-state 1";

bool parse_int(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// Reads "key=value" into *value; false when the line is not that key.
bool parse_line(std::string_view line, std::string_view key, int64_t* value) {
  if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != '=') return false;
  return parse_int(line.substr(key.size() + 1), value);
}

}  // namespace

std::string format_quorum_state(const QuorumState& s) {
  std::string out(kHeader);
  out += "\nepoch=" + std::to_string(s.epoch);
  out += "\nvoted_for=" + std::to_string(s.voted_for);
  out += "\nleader_id=" + std::to_string(s.leader_id);
  out += "\nrecovering=" + std::string(s.recovering ? "1" : "0");
  out += "\n";
  return out;
}

Status parse_quorum_state(const std::string& text, QuorumState* out) {
  std::vector<std::string_view> lines;
  std::string_view rest(text);
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return Status::corruption("raft quorum state: no newline at the end");
    lines.push_back(rest.substr(0, nl));
    rest.remove_prefix(nl + 1);
  }
  int64_t epoch, voted, leader, recovering;
  if (lines.size() != 5 || lines[0] != kHeader || !parse_line(lines[1], "epoch", &epoch) ||
      !parse_line(lines[2], "voted_for", &voted) || !parse_line(lines[3], "leader_id", &leader) ||
      !parse_line(lines[4], "recovering", &recovering)) {
    return Status::corruption("raft quorum state: not the expected five lines");
  }
  if (epoch < 0 || epoch > INT32_MAX || voted < -1 || voted > INT32_MAX || leader < -1 || leader > INT32_MAX ||
      (recovering != 0 && recovering != 1)) {
    return Status::corruption("raft quorum state: a value out of range");
  }
  *out = QuorumState{static_cast<Epoch>(epoch), static_cast<NodeId>(voted), static_cast<NodeId>(leader),
                     recovering == 1};
  return Status();
}

Status FileQuorumStateStore::read(QuorumState* out) {
  std::string path = directory_ + "/" + std::string(kFileName);
  if (!port::path_exists(path)) return Status::not_found("raft: no quorum state in " + directory_);
  port::File file;
  if (auto ec = port::File::open(path, port::OpenMode::kReadOnly, &file)) return Status::from_error_code(ec, path);
  uint64_t size = 0;
  if (auto ec = file.size(&size)) return Status::from_error_code(ec, path);
  if (size > 4096) return Status::corruption(path + ": larger than a quorum state can be");
  std::string text(static_cast<size_t>(size), '\0');  // <= 4096, checked above
  size_t got = 0;
  if (auto ec = file.read_at(0, text.data(), text.size(), &got)) return Status::from_error_code(ec, path);
  text.resize(got);
  return parse_quorum_state(text, out).with_context(path);
}

Status FileQuorumStateStore::write(const QuorumState& state) {
  const std::string path = directory_ + "/" + std::string(kFileName);
  const std::string text = format_quorum_state(state);
  if (auto ec = port::replace_file(path, text.data(), text.size(), /*durable=*/true)) {
    return Status::from_error_code(ec, path);
  }
  return Status();
}

}  // namespace eddy::raft
