// eddy consume: kafka-console-consumer.sh for Eddy, without consumer groups:
// reads one partition (--partition) or all partitions of a topic from
// --offset / --from-beginning / the end, and prints each record as Kafka's
// DefaultMessageFormatter does (print.timestamp, print.partition,
// print.offset, print.headers, print.key, then the value, separated by
// key.separator). Ends after --max-messages records, or when no record came
// for --timeout-ms (exit code 0); prints "Processed a total of N messages"
// on stderr. Compressed batches are decompressed when the codec is built in
// (EDDY_COMPRESSION), otherwise the tool stops with an error naming the
// codec.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "app/cli.h"
#include "app/tool_flags.h"
#include "app/tools.h"
#include "client/client.h"
#include "client/consumer.h"

namespace eddy::app {
namespace {

constexpr const char* kTool = "consume";

constexpr FlagSpec kFlags[] = {
    {"--bootstrap-server", "HOST:PORT[,...]", false, "brokers to connect to (required)"},
    {"--command-config", "FILE", false, "Kafka client properties: security.protocol, sasl.*, ssl.* (PEM)"},
    {"--topic", "TOPIC", false, "the topic to read (required)"},
    {"--partition", "P", false, "read only partition P (default: all partitions)"},
    {"--offset", "N|earliest|latest", false, "start offset (needs --partition; default latest)"},
    {"--from-beginning", nullptr, false, "start at the earliest offset"},
    {"--max-messages", "N", false, "exit after N records"},
    {"--timeout-ms", "MS", false, "exit when no record arrived for MS"},
    {"--property", "KEY=VALUE", true, "print.key|print.value|print.partition|print.offset|print.timestamp|"
                                      "print.headers=true|false, key.separator, line.separator, headers.separator, "
                                      "headers.key.separator, null.literal"},
    {"--request-timeout-ms", "MS", false, "per request; also how long a lost broker is retried (default 30000)"},
    {"--help", nullptr, false, "this text"},
};
constexpr const char* kProperties[] = {"print.key",       "print.value",          "print.partition",
                                       "print.offset",    "print.timestamp",      "print.headers",
                                       "key.separator",   "line.separator",       "headers.separator",
                                       "headers.key.separator", "null.literal"};

std::string usage() { return describe_flags("eddy consume --bootstrap-server HOST:PORT --topic TOPIC [options]", kFlags); }

struct Format {
  bool key = false;
  bool value = true;
  bool partition = false;
  bool offset = false;
  bool timestamp = false;
  bool headers = false;
  std::string separator = "\t";
  std::string line_end = "\n";
  std::string headers_separator = ",";
  std::string header_key_separator = ":";
  std::string null_literal = "null";
};

Status bool_property(const std::map<std::string, std::string>& p, const char* key, bool* out) {
  auto it = p.find(key);
  if (it == p.end()) return Status();
  if (it->second != "true" && it->second != "false") {
    return Status::invalid_argument(std::string("--property ") + key + ": expected true or false, got '" + it->second + "'");
  }
  *out = it->second == "true";
  return Status();
}

void put(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }
void put_bytes(const std::optional<std::span<const uint8_t>>& b, const Format& f) {
  if (!b) {
    put(f.null_literal);
  } else if (!b->empty()) {
    std::fwrite(b->data(), 1, b->size(), stdout);
  }
}

void print_record(const client::ConsumerRecord& r, const Format& f) {
  const client::DecodedRecord& d = r.decoded;
  // Kafka's DefaultMessageFormatter: each printed field is followed by the
  // separator when another field follows.
  bool after_timestamp = f.partition || f.offset || f.headers || f.key || f.value;
  if (f.timestamp) {
    if (d.timestamp < 0) {
      put("NO_TIMESTAMP");
    } else {
      put(d.timestamp_type == protocol::TimestampType::kLogAppendTime ? "LogAppendTime:" : "CreateTime:");
      put(std::to_string(d.timestamp));
    }
    if (after_timestamp) put(f.separator);
  }
  if (f.partition) {
    put("Partition:" + std::to_string(r.partition));
    if (f.offset || f.headers || f.key || f.value) put(f.separator);
  }
  if (f.offset) {
    put("Offset:" + std::to_string(d.offset));
    if (f.headers || f.key || f.value) put(f.separator);
  }
  if (f.headers) {
    const auto& headers = d.record->headers;
    if (headers.empty()) put("NO_HEADERS");
    for (size_t i = 0; i < headers.size(); ++i) {
      if (i > 0) put(f.headers_separator);
      std::fwrite(headers[i].key.data(), 1, headers[i].key.size(), stdout);
      put(f.header_key_separator);
      put_bytes(headers[i].value, f);
    }
    if (f.key || f.value) put(f.separator);
  }
  if (f.key) {
    put_bytes(d.record->key, f);
    if (f.value) put(f.separator);
  }
  if (f.value) put_bytes(d.record->value, f);
  put(f.line_end);
}

// What the flags ask for, checked.
struct ConsumeSettings {
  client::ClientOptions client;
  std::string topic;
  Format format;
  int64_t partition = -1;
  int64_t max_messages = -1;
  int64_t timeout_ms = -1;
  int64_t start = client::kLatestOffset;
};

Status format_properties(const ToolFlags& flags, Format* format) {
  std::map<std::string, std::string> properties;
  if (Status s = parse_properties(flags.values("--property"), kProperties, &properties); !s.ok()) return s;
  const std::pair<const char*, bool*> switches[] = {
      {"print.key", &format->key},           {"print.value", &format->value},
      {"print.partition", &format->partition}, {"print.offset", &format->offset},
      {"print.timestamp", &format->timestamp}, {"print.headers", &format->headers},
  };
  for (const auto& [key, out] : switches) {
    if (Status s = bool_property(properties, key, out); !s.ok()) return s;
  }
  if (properties.count("key.separator")) format->separator = properties["key.separator"];
  if (properties.count("line.separator")) format->line_end = properties["line.separator"];
  if (properties.count("headers.separator")) format->headers_separator = properties["headers.separator"];
  if (properties.count("headers.key.separator")) format->header_key_separator = properties["headers.key.separator"];
  if (properties.count("null.literal")) format->null_literal = properties["null.literal"];
  return Status();
}

// --from-beginning, or --offset (with --partition): where reading starts.
Status start_offset(const ToolFlags& flags, int64_t partition, int64_t* start) {
  *start = flags.has("--from-beginning") ? client::kEarliestOffset : client::kLatestOffset;
  const std::string* offset = flags.value("--offset");
  if (offset == nullptr) return Status();
  if (flags.has("--from-beginning")) {
    return Status::invalid_argument("--offset and --from-beginning cannot be given together");
  }
  if (partition < 0) {
    return Status::invalid_argument("--offset needs --partition");
  }
  if (*offset == "earliest") {
    *start = client::kEarliestOffset;
  } else if (*offset == "latest") {
    *start = client::kLatestOffset;
  } else if (!parse_int64(*offset, 0, INT64_MAX, start)) {
    return Status::invalid_argument("--offset: expected a non-negative offset, earliest or latest, got '" + *offset + "'");
  }
  return Status();
}

Status consume_settings(const ToolFlags& flags, ConsumeSettings* out) {
  if (Status s = client_options_from_flags(flags, &out->client); !s.ok()) return s;
  const std::string* topic = flags.value("--topic");
  if (topic == nullptr || topic->empty()) {
    return Status::invalid_argument("--topic is required");
  }
  out->topic = *topic;
  if (Status s = format_properties(flags, &out->format); !s.ok()) return s;
  if (Status s = int_flag(flags, "--partition", 0, INT32_MAX, &out->partition); !s.ok()) return s;
  if (Status s = int_flag(flags, "--max-messages", 1, INT64_MAX, &out->max_messages); !s.ok()) return s;
  if (Status s = int_flag(flags, "--timeout-ms", 0, INT64_MAX / 2, &out->timeout_ms); !s.ok()) return s;
  return start_offset(flags, out->partition, &out->start);
}

// Polls and prints until --max-messages, --timeout-ms without a record, a
// fatal error, or retriable failures for longer than a request timeout.
int consume_loop(client::Consumer& consumer, const ConsumeSettings& settings, int64_t* processed) {
  const int64_t timeout_ms = settings.timeout_ms;
  const int64_t max_messages = settings.max_messages;
  int64_t idle_since = port::monotonic_millis();
  int64_t failing_since = -1;
  for (;;) {
    int64_t now = port::monotonic_millis();
    if (timeout_ms >= 0 && now - idle_since >= timeout_ms) return kExitOk;
    int64_t slice = timeout_ms >= 0 ? std::max<int64_t>(0, idle_since + timeout_ms - now) : 1000;
    size_t delivered = 0;
    Status s = consumer.poll(client::Deadline::after_ms(std::min<int64_t>(slice, 1000)),
                             [&](const client::ConsumerRecord& r) {
                               print_record(r, settings.format);
                               ++*processed;
                               return max_messages < 0 || *processed < max_messages;
                             },
                             &delivered);
    std::fflush(stdout);
    if (delivered > 0) idle_since = port::monotonic_millis();
    if (max_messages >= 0 && *processed >= max_messages) return kExitOk;
    if (s.ok()) {
      failing_since = -1;
      continue;
    }
    if (!s.retriable()) return runtime_error(kTool, s);
    // A lost broker or a moving leader: keep trying for one request timeout.
    if (failing_since < 0) {
      failing_since = port::monotonic_millis();
      std::fprintf(stderr, "eddy consume: %s; retrying\n", s.message().c_str());
    }
    if (port::monotonic_millis() - failing_since >= settings.client.request_timeout_ms ||
        (timeout_ms >= 0 && port::monotonic_millis() - idle_since >= timeout_ms)) {
      return runtime_error(kTool, "giving up: " + s.message());
    }
  }
}

}  // namespace

int run_consume(const std::vector<std::string>& args) {
  ToolFlags flags;
  int exit_code = kExitOk;
  if (!parse_tool_args(kTool, args, kFlags, usage(), &flags, &exit_code)) return exit_code;
  ConsumeSettings settings;
  if (Status bad = consume_settings(flags, &settings); !bad.ok()) return usage_error(kTool, bad, usage());

  client::Client client(settings.client);
  Status s = client.bootstrap();
  if (!s.ok()) return runtime_error(kTool, s);
  const client::TopicInfo* info = nullptr;
  s = client.topic_metadata(settings.topic, false, &info);
  if (!s.ok()) {
    if (s.code() == Status::Code::kNotFound) {
      return runtime_error(kTool, "topic '" + settings.topic + "' does not exist");
    }
    return runtime_error(kTool, s);
  }
  std::vector<std::pair<int32_t, int64_t>> starts;
  if (settings.partition >= 0) {
    starts.emplace_back(static_cast<int32_t>(settings.partition), settings.start);
  } else {
    for (const auto& p : info->partitions) starts.emplace_back(p.partition, settings.start);
  }
  client::ConsumerOptions consumer_options;
  consumer_options.reset = settings.start == client::kEarliestOffset ? client::OffsetReset::kEarliest
                                                                      : client::OffsetReset::kLatest;
  client::Consumer consumer(&client, consumer_options);
  s = consumer.assign(settings.topic, starts);
  if (!s.ok()) return runtime_error(kTool, s);
  int64_t processed = 0;
  const int rc = consume_loop(consumer, settings, &processed);
  std::fprintf(stderr, "Processed a total of %lld messages\n", static_cast<long long>(processed));
  return rc;
}

}  // namespace eddy::app
