// eddy groups: kafka-consumer-groups.sh for Eddy: --list, --describe (offsets
// and lag per partition, or --members), and --reset-offsets of an inactive
// group (--dry-run by default, --execute to commit).
//
// The group APIs are not in the client's negotiated set (client/api_versions),
// so this tool picks their versions itself from the broker's ApiVersions.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "app/cli.h"
#include "app/tool_flags.h"
#include "app/tools_groups.h"
#include "client/client.h"
#include "port/log.h"
#include "protocol/consumer_protocol.h"
#include "protocol/generated/messages.h"
#include "protocol/errors.h"

namespace eddy::app {
namespace {

constexpr const char* kTool = "groups";

constexpr FlagSpec kFlags[] = {
    {"--bootstrap-server", "HOST:PORT[,...]", false, "brokers to connect to (required)"},
    {"--command-config", "FILE", false, "Kafka client properties: security.protocol, sasl.*, ssl.* (PEM)"},
    {"--list", nullptr, false, "list consumer groups"},
    {"--describe", nullptr, false, "offsets and lag of a group (--group)"},
    {"--members", nullptr, false, "--describe: the members and their assignments instead"},
    {"--reset-offsets", nullptr, false, "move the committed offsets of an inactive group"},
    {"--group", "GROUP", false, "the group"},
    {"--topic", "TOPIC[:P,P...]", false, "--reset-offsets: the topic (all or the listed partitions)"},
    {"--to-earliest", nullptr, false, "--reset-offsets: to the log start"},
    {"--to-latest", nullptr, false, "--reset-offsets: to the log end"},
    {"--to-offset", "N", false, "--reset-offsets: to offset N (clamped to the log)"},
    {"--to-datetime", "YYYY-MM-DDTHH:mm:SS.sss", false, "--reset-offsets: to the first offset at or after (UTC)"},
    {"--dry-run", nullptr, false, "--reset-offsets: only print the new offsets (the default)"},
    {"--execute", nullptr, false, "--reset-offsets: commit the new offsets"},
    {"--request-timeout-ms", "MS", false, "per request (default 30000)"},
    {"--help", nullptr, false, "this text"},
};

std::string usage() {
  return describe_flags("eddy groups --bootstrap-server HOST:PORT (--list | --describe --group G [--members] | "
                        "--reset-offsets --group G --topic T (--to-earliest|--to-latest|--to-offset N|"
                        "--to-datetime T) [--dry-run|--execute])",
                        kFlags);
}

// One request at the highest version both this tool (up to max_version)
// and the broker speak.
template <typename Req, typename Resp, typename Fill>
Status group_call(client::Client& client, int16_t max_version, Fill&& fill, Resp* response) {
  client::BrokerConnection* conn = nullptr;
  Status s = client.connection(-1, &conn);
  if (!s.ok()) return s;
  auto range = conn->versions().broker_range(Req::kApiKey);
  if (!range || range->min > max_version) {
    return Status::error(Status::Code::kUnsupportedVersion,
                         std::string("the broker does not support ") + protocol::api_name(Req::kApiKey));
  }
  const int16_t version = std::min(max_version, range->max);
  Req request;
  fill(request, version);
  return conn->call(request, version, response, client.request_deadline());
}

Status broker_error(int16_t code, const std::string& context) {
  return protocol::broker_error(code, context);
}

struct Member {
  std::string id, host, client_id;
  std::vector<std::pair<std::string, int32_t>> partitions;
};

struct GroupInfo {
  std::string state;
  std::vector<Member> members;
};

Status describe_group(client::Client& client, const std::string& group, GroupInfo* out) {
  protocol::DescribeGroupsResponse resp;
  Status s = group_call<protocol::DescribeGroupsRequest>(
      client, 5, [&](protocol::DescribeGroupsRequest& r, int16_t) { r.groups = {group}; }, &resp);
  if (!s.ok()) return s;
  if (resp.groups.size() != 1) return Status::error(Status::Code::kProtocol, "DescribeGroups: no group");
  const auto& g = resp.groups[0];
  if (g.error_code != 0) return broker_error(g.error_code, "DescribeGroups " + group);
  out->state = g.group_state;
  for (const auto& m : g.members) {
    Member member{m.member_id, m.client_host, m.client_id, {}};
    if (!m.member_assignment.empty()) {
      protocol::ConsumerProtocolAssignment a;
      int16_t v = 0;
      if (protocol::decode_consumer_assignment(m.member_assignment, &a, &v).ok()) {
        for (const auto& tp : a.assigned_partitions) {
          for (int32_t p : tp.partitions) member.partitions.emplace_back(tp.topic, p);
        }
      }
    }
    std::sort(member.partitions.begin(), member.partitions.end());
    out->members.push_back(std::move(member));
  }
  return Status();
}

// Committed offsets of group: (topic, partition) -> offset.
Status committed_offsets(client::Client& client, const std::string& group,
                         std::map<std::pair<std::string, int32_t>, int64_t>* out) {
  protocol::OffsetFetchResponse resp;
  Status s = group_call<protocol::OffsetFetchRequest>(
      client, 7,
      [&](protocol::OffsetFetchRequest& r, int16_t) {
        r.group_id = group;
        r.topics = std::nullopt;  // all (v2+)
      },
      &resp);
  if (!s.ok()) return s;
  if (resp.error_code != 0) return broker_error(resp.error_code, "OffsetFetch " + group);
  for (const auto& t : resp.topics) {
    for (const auto& p : t.partitions) {
      if (p.error_code != 0) return broker_error(p.error_code, "OffsetFetch " + group + " " + t.name);
      if (p.committed_offset >= 0) (*out)[{t.name, p.partition_index}] = p.committed_offset;
    }
  }
  return Status();
}

// ListOffsets for one partition: timestamp -1 latest, -2 earliest.
Status list_offset(client::Client& client, const std::string& topic, int32_t partition, int64_t timestamp,
                   int64_t* out) {
  protocol::ListOffsetsResponse resp;
  Status s = client.call<protocol::ListOffsetsRequest>(
      -1,
      [&](protocol::ListOffsetsRequest& r, int16_t) {
        r.replica_id = -1;
        protocol::ListOffsetsRequest::ListOffsetsTopic t;
        t.name = topic;
        protocol::ListOffsetsRequest::ListOffsetsPartition p;
        p.partition_index = partition;
        p.timestamp = timestamp;
        t.partitions.push_back(p);
        r.topics.push_back(t);
      },
      &resp);
  if (!s.ok()) return s;
  if (resp.topics.empty() || resp.topics[0].partitions.empty())
    return Status::error(Status::Code::kProtocol, "ListOffsets: empty response");
  const auto& p = resp.topics[0].partitions[0];
  if (p.error_code != 0) return broker_error(p.error_code, "ListOffsets " + topic + "-" + std::to_string(partition));
  *out = p.offset;
  return Status();
}

std::string or_dash(int64_t v) { return v < 0 ? "-" : std::to_string(v); }
std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

int do_list(client::Client& client) {
  protocol::ListGroupsResponse resp;
  Status s = group_call<protocol::ListGroupsRequest>(
      client, 4, [](protocol::ListGroupsRequest&, int16_t) {}, &resp);
  if (!s.ok()) return runtime_error(kTool, s);
  if (resp.error_code != 0) return runtime_error(kTool, broker_error(resp.error_code, "ListGroups"));
  for (const auto& g : resp.groups) std::printf("%s\n", port::printable(g.group_id).c_str());
  return kExitOk;
}

int do_describe(client::Client& client, const std::string& group, bool members_only) {
  GroupInfo info;
  Status s = describe_group(client, group, &info);
  if (!s.ok()) return runtime_error(kTool, s);
  std::map<std::pair<std::string, int32_t>, int64_t> committed;
  s = committed_offsets(client, group, &committed);
  if (!s.ok()) return runtime_error(kTool, s);
  if (info.state == "Dead" && committed.empty()) {
    return runtime_error(kTool, "consumer group '" + group + "' does not exist");
  }
  if (info.members.empty()) std::fprintf(stderr, "\nConsumer group '%s' has no active members.\n", group.c_str());
  if (members_only) {
    std::printf("\n%-20s %-50s %-16s %-20s %-12s %s\n", "GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
                "ASSIGNMENT");
    for (const auto& m : info.members) {
      std::map<std::string, std::vector<int32_t>> by_topic;
      for (const auto& [t, p] : m.partitions) by_topic[t].push_back(p);
      std::string assignment;
      for (const auto& [t, ps] : by_topic) {
        std::string list;
        for (int32_t p : ps) list += (list.empty() ? "" : ",") + std::to_string(p);
        assignment += (assignment.empty() ? "" : ",") + t + "(" + list + ")";
      }
      std::printf("%-20s %-50s %-16s %-20s %-12zu %s\n", group.c_str(), port::printable(m.id).c_str(),
                  port::printable(m.host).c_str(), port::printable(m.client_id).c_str(), m.partitions.size(),
                  or_dash(assignment).c_str());
    }
    return kExitOk;
  }
  // Rows: every committed or assigned partition.
  std::map<std::pair<std::string, int32_t>, const Member*> owner;
  for (const auto& m : info.members) {
    for (const auto& tp : m.partitions) owner[tp] = &m;
  }
  std::set<std::pair<std::string, int32_t>> rows;
  for (const auto& [tp, off] : committed) rows.insert(tp);
  for (const auto& [tp, m] : owner) rows.insert(tp);
  std::printf("\n%-20s %-20s %-10s %-15s %-15s %-8s %-50s %-16s %s\n", "GROUP", "TOPIC", "PARTITION",
              "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID");
  for (const auto& tp : rows) {
    int64_t end = -1;
    if (!list_offset(client, tp.first, tp.second, -1, &end).ok()) end = -1;
    auto c = committed.find(tp);
    const int64_t current = c == committed.end() ? -1 : c->second;
    const int64_t lag = current >= 0 && end >= 0 ? end - current : -1;
    auto o = owner.find(tp);
    const Member* m = o == owner.end() ? nullptr : o->second;
    std::printf("%-20s %-20s %-10d %-15s %-15s %-8s %-50s %-16s %s\n", group.c_str(), tp.first.c_str(), tp.second,
                or_dash(current).c_str(), or_dash(end).c_str(), or_dash(lag).c_str(),
                m ? port::printable(m->id).c_str() : "-", m ? port::printable(m->host).c_str() : "-",
                m ? port::printable(m->client_id).c_str() : "-");
  }
  return kExitOk;
}

// "YYYY-MM-DDTHH:mm:SS[.sss][Z]" (UTC) -> ms since the epoch.
bool parse_datetime(const std::string& text, int64_t* out) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, ms = 0;
  char tail[8] = {0};
  int n = std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%7s", &y, &mo, &d, &h, &mi, &s, &ms, tail);
  if (n < 6) return false;
  if (n == 6 && text.size() > 19 && text.substr(19) != "Z") return false;
  if (n == 8 && std::string(tail) != "Z") return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || y < 1970) return false;
  // Days from civil (Howard Hinnant's algorithm).
  const int yy = y - (mo <= 2 ? 1 : 0);
  const int era = yy / 400;
  const int yoe = yy - era * 400;
  const int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = static_cast<int64_t>(era) * 146097 + doe - 719468;
  *out = ((days * 24 + h) * 60 + mi) * 60000LL + s * 1000LL + ms;
  return true;
}

// "topic" or "topic:0,2,5" -> the topic and the partitions named (none:
// all of them). kInvalidArgument on a bad partition.
Status parse_topic_partitions(const std::string& arg, std::string* topic, std::vector<int32_t>* partitions) {
  *topic = arg;
  auto colon = arg.find(':');
  if (colon == std::string::npos) return Status();
  topic->resize(colon);
  const std::string list = arg.substr(colon + 1);
  for (size_t pos = 0; pos <= list.size();) {
    size_t comma = list.find(',', pos);
    std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    int64_t p = 0;
    if (!parse_int64(item, 0, INT32_MAX, &p)) {
      return Status::invalid_argument("--topic: bad partition '" + item + "'");
    }
    partitions->push_back(static_cast<int32_t>(p));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return Status();
}

// Where --reset-offsets moves one partition.
struct ResetTarget {
  enum class Kind { kEarliest, kLatest, kOffset, kDatetime } kind = Kind::kEarliest;
  int64_t offset = 0;     // kOffset
  int64_t timestamp = 0;  // kDatetime
};

Status parse_reset_target(const ToolFlags& flags, ResetTarget* target) {
  const char* targets[] = {"--to-earliest", "--to-latest", "--to-offset", "--to-datetime"};
  int target_count = 0;
  for (const char* t : targets) target_count += flags.has(t) ? 1 : 0;
  if (target_count != 1) {
    return Status::invalid_argument("give exactly one of --to-earliest, --to-latest, --to-offset, --to-datetime");
  }
  if (flags.has("--dry-run") && flags.has("--execute")) {
    return Status::invalid_argument("--dry-run and --execute exclude each other");
  }
  if (flags.has("--to-latest")) target->kind = ResetTarget::Kind::kLatest;
  if (flags.has("--to-offset")) {
    target->kind = ResetTarget::Kind::kOffset;
    if (Status s = int_flag(flags, "--to-offset", 0, INT64_MAX, &target->offset); !s.ok()) return s;
  }
  if (flags.has("--to-datetime")) {
    target->kind = ResetTarget::Kind::kDatetime;
    if (!parse_datetime(*flags.value("--to-datetime"), &target->timestamp)) {
      return Status::invalid_argument("--to-datetime: expected YYYY-MM-DDTHH:mm:SS.sss (UTC)");
    }
  }
  return Status();
}

Status resolve_reset(client::Client& client, const std::string& topic, int32_t partition,
                     const ResetTarget& target, int64_t* offset) {
  int64_t earliest = 0, latest = 0;
  Status s = list_offset(client, topic, partition, -2, &earliest);
  if (s.ok()) s = list_offset(client, topic, partition, -1, &latest);
  if (!s.ok()) return s;
  switch (target.kind) {
    case ResetTarget::Kind::kEarliest: *offset = earliest; break;
    case ResetTarget::Kind::kLatest: *offset = latest; break;
    case ResetTarget::Kind::kOffset: *offset = std::clamp(target.offset, earliest, latest); break;
    case ResetTarget::Kind::kDatetime:
      s = list_offset(client, topic, partition, target.timestamp, offset);
      if (s.ok() && *offset < 0) *offset = latest;  // nothing at or after the time
      break;
  }
  return s;
}

Status commit_reset(client::Client& client, const std::string& group, const std::string& topic,
                    const std::vector<std::pair<int32_t, int64_t>>& target) {
  protocol::OffsetCommitResponse resp;
  Status s = group_call<protocol::OffsetCommitRequest>(
      client, 8,
      [&](protocol::OffsetCommitRequest& r, int16_t) {
        r.group_id = group;
        r.generation_id_or_member_epoch = -1;
        r.member_id = "";
        protocol::OffsetCommitRequest::OffsetCommitRequestTopic t;
        t.name = topic;
        for (const auto& [p, off] : target) {
          protocol::OffsetCommitRequest::OffsetCommitRequestPartition cp;
          cp.partition_index = p;
          cp.committed_offset = off;
          cp.committed_metadata = "";
          t.partitions.push_back(cp);
        }
        r.topics.push_back(t);
      },
      &resp);
  if (!s.ok()) return s;
  for (const auto& t : resp.topics) {
    for (const auto& p : t.partitions) {
      if (p.error_code != 0) {
        return broker_error(p.error_code, "OffsetCommit " + t.name + "-" + std::to_string(p.partition_index));
      }
    }
  }
  return Status();
}

int do_reset(client::Client& client, const ToolFlags& flags, const std::string& group) {
  const std::string* topic_arg = flags.value("--topic");
  if (topic_arg == nullptr) return usage_error(kTool, "--reset-offsets needs --topic", usage());
  ResetTarget how;
  std::string topic;
  std::vector<int32_t> partitions;
  if (Status bad = parse_reset_target(flags, &how); !bad.ok()) return usage_error(kTool, bad, usage());
  if (Status bad = parse_topic_partitions(*topic_arg, &topic, &partitions); !bad.ok()) {
    return usage_error(kTool, bad, usage());
  }
  const client::TopicInfo* info = nullptr;
  Status s = client.topic_metadata(topic, false, &info);
  if (!s.ok()) return runtime_error(kTool, s);
  if (partitions.empty()) {
    for (const auto& p : info->partitions) partitions.push_back(p.partition);
  }
  for (int32_t p : partitions) {
    if (info->partition(p) == nullptr) {
      return runtime_error(kTool, "topic " + topic + " has no partition " + std::to_string(p));
    }
  }
  GroupInfo group_info;
  s = describe_group(client, group, &group_info);
  if (!s.ok()) return runtime_error(kTool, s);
  if (group_info.state != "Empty" && group_info.state != "Dead") {
    return runtime_error(kTool, "Assignments can only be reset if the group '" + group +
                                    "' is inactive, but the current state is " + group_info.state + ".");
  }
  std::vector<std::pair<int32_t, int64_t>> target;
  for (int32_t p : partitions) {
    int64_t offset = 0;
    s = resolve_reset(client, topic, p, how, &offset);
    if (!s.ok()) return runtime_error(kTool, s);
    target.emplace_back(p, offset);
  }
  if (flags.has("--execute")) {
    s = commit_reset(client, group, topic, target);
    if (!s.ok()) return runtime_error(kTool, s);
  }
  std::printf("\n%-20s %-20s %-10s %s\n", "GROUP", "TOPIC", "PARTITION", "NEW-OFFSET");
  for (const auto& [p, off] : target) {
    std::printf("%-20s %-20s %-10d %lld\n", group.c_str(), topic.c_str(), p, static_cast<long long>(off));
  }
  return kExitOk;
}

}  // namespace

int run_groups(const std::vector<std::string>& args) {
  ToolFlags flags;
  int exit_code = kExitOk;
  if (!parse_tool_args(kTool, args, kFlags, usage(), &flags, &exit_code)) return exit_code;
  const char* actions[] = {"--list", "--describe", "--reset-offsets"};
  int action_count = 0;
  std::string action;
  for (const char* a : actions) {
    if (flags.has(a)) {
      ++action_count;
      action = a;
    }
  }
  if (action_count != 1) return usage_error(kTool, "give exactly one of --list, --describe, --reset-offsets", usage());
  const std::string* group = flags.value("--group");
  if (action != "--list" && (group == nullptr || group->empty()))
    return usage_error(kTool, action + " needs --group", usage());
  if (flags.has("--members") && action != "--describe")
    return usage_error(kTool, "--members goes with --describe", usage());
  client::ClientOptions options;
  if (Status bad = client_options_from_flags(flags, &options); !bad.ok()) return usage_error(kTool, bad, usage());
  client::Client client(options);
  Status s = client.bootstrap();
  if (!s.ok()) return runtime_error(kTool, s);
  if (action == "--list") return do_list(client);
  if (action == "--describe") return do_describe(client, *group, flags.has("--members"));
  return do_reset(client, flags, *group);
}

}  // namespace eddy::app
