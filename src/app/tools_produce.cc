// eddy produce: kafka-console-producer.sh for Eddy. Each line of stdin is a
// record (optionally "key<separator>value" with parse.key=true). Lines are
// batched per partition and a batch goes out when full, after --linger-ms
// without a full batch, or at end of input. A failed batch is reported on
// stderr; the exit code is 1 when any record failed.
//
// stdin is read by a helper thread so that a slow or interactive input
// still sends its lines after --linger-ms: the main thread waits for lines
// with a timeout, which a blocking read cannot do without platform calls.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/cli.h"
#include "app/tool_flags.h"
#include "app/tools.h"
#include "client/client.h"
#include "client/compression.h"
#include "client/producer.h"
#include "port/mutex.h"
#include "port/port.h"
#include "port/thread_annotations.h"

namespace eddy::app {
namespace {

constexpr const char* kTool = "produce";

constexpr FlagSpec kFlags[] = {
    {"--bootstrap-server", "HOST:PORT[,...]", false, "brokers to connect to (required)"},
    {"--command-config", "FILE", false, "Kafka client properties: security.protocol, sasl.*, ssl.* (PEM)"},
    {"--topic", "TOPIC", false, "the topic to write to (required)"},
    {"--partition", "P", false, "write every record to partition P (default: by key hash, or sticky)"},
    {"--property", "KEY=VALUE", true, "parse.key=true, key.separator=SEP (default tab), null.marker=TEXT"},
    {"--acks", "0|1|all", false, "acknowledgement to wait for (default all)"},
    {"--request-required-acks", "0|1|-1|all", false, "same as --acks (Kafka's name)"},
    {"--compression", "CODEC", false, "none, gzip, snappy, lz4, zstd (default none)"},
    {"--compression-codec", "CODEC", false, "same as --compression (Kafka's name)"},
    {"--batch-size", "BYTES", false, "target batch size per partition (default 16384)"},
    {"--linger-ms", "MS", false, "send a partial batch after this idle time (default 100)"},
    {"--message-send-max-retries", "N", false, "retries of a batch on retriable errors (default 3)"},
    {"--request-timeout-ms", "MS", false, "per request (default 30000)"},
    {"--help", nullptr, false, "this text"},
};
constexpr const char* kProperties[] = {"parse.key", "key.separator", "null.marker"};

std::string usage() {
  return describe_flags("eddy produce --bootstrap-server HOST:PORT --topic TOPIC [options] < lines", kFlags);
}

// Lines handed from the reader thread to the main thread. Bounded, so a
// fast input waits for the network instead of filling memory.
class LineQueue {
 public:
  static constexpr size_t kMaxBytes = 8u << 20;

  void push(std::string line) EXCLUDES(mu_) {
    port::MutexLock lock(mu_);
    while (bytes_ >= kMaxBytes) lock.wait(not_full_);
    bytes_ += line.size() + 1;
    lines_.push_back(std::move(line));
    // Only a consumer that found the queue empty can be waiting.
    if (lines_.size() == 1) not_empty_.notify_one();
  }
  void finish() EXCLUDES(mu_) {
    port::MutexLock lock(mu_);
    eof_ = true;
    not_empty_.notify_one();
  }
  // Waits until a line is available, input ended, or the wait time passed
  // (wait_ms < 0: no limit); moves the available lines to *out. Returns
  // false once input has ended and every line was taken.
  bool take(int64_t wait_ms, std::vector<std::string>* out) EXCLUDES(mu_) {
    port::MutexLock lock(mu_);
    if (wait_ms < 0) {
      while (lines_.empty() && !eof_) lock.wait(not_empty_);
    } else {
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
      while (lines_.empty() && !eof_) {
        if (lock.wait_until(not_empty_, until) == std::cv_status::timeout) break;
      }
    }
    out->clear();
    while (!lines_.empty()) {
      out->push_back(std::move(lines_.front()));
      lines_.pop_front();
    }
    bytes_ = 0;
    not_full_.notify_one();
    return !(eof_ && out->empty());
  }

 private:
  port::Mutex mu_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<std::string> lines_ GUARDED_BY(mu_);
  size_t bytes_ GUARDED_BY(mu_) = 0;
  bool eof_ GUARDED_BY(mu_) = false;
};

void read_lines(LineQueue* queue) {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    queue->push(std::move(line));
  }
  queue->finish();
}

std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// What the flags ask for, checked.
struct ProduceSettings {
  client::ClientOptions client;
  client::ProducerOptions producer;
  std::string topic;
  int64_t partition = -1;
  int64_t linger_ms = 100;
  bool parse_key = false;
  std::string separator = "\t";
  std::optional<std::string> null_marker;
};

// --acks/--request-required-acks and --compression/--compression-codec.
Status producer_flags(const ToolFlags& flags, client::ProducerOptions* producer) {
  if (flags.has("--acks") && flags.has("--request-required-acks")) {
    return Status::invalid_argument("give --acks or --request-required-acks, not both");
  }
  const std::string* acks = flags.has("--acks") ? flags.value("--acks") : flags.value("--request-required-acks");
  if (acks != nullptr) {
    if (*acks == "all" || *acks == "-1") {
      producer->acks = -1;
    } else if (*acks == "1" || *acks == "0") {
      producer->acks = static_cast<int16_t>(*acks == "1");
    } else {
      return Status::invalid_argument("--acks: expected 0, 1 or all, got '" + *acks + "'");
    }
  }
  if (flags.has("--compression") && flags.has("--compression-codec")) {
    return Status::invalid_argument("give --compression or --compression-codec, not both");
  }
  const std::string* codec =
      flags.has("--compression") ? flags.value("--compression") : flags.value("--compression-codec");
  if (codec == nullptr) return Status();
  if (!client::parse_compression(*codec, &producer->compression)) {
    return Status::invalid_argument("--compression: expected none, gzip, snappy, lz4 or zstd, got '" + *codec + "'");
  }
  if (!client::compression_available(producer->compression)) {
    return Status::invalid_argument("--compression " + *codec + ": this eddy was built without that codec (CMake option EDDY_COMPRESSION)");
  }
  return Status();
}

Status produce_settings(const ToolFlags& flags, ProduceSettings* out) {
  if (Status s = client_options_from_flags(flags, &out->client); !s.ok()) return s;
  const std::string* topic = flags.value("--topic");
  if (topic == nullptr || topic->empty()) {
    return Status::invalid_argument("--topic is required");
  }
  out->topic = *topic;
  std::map<std::string, std::string> properties;
  if (Status s = parse_properties(flags.values("--property"), kProperties, &properties); !s.ok()) return s;
  out->parse_key = properties.count("parse.key") != 0 && properties["parse.key"] == "true";
  if (properties.count("key.separator") != 0) out->separator = properties["key.separator"];
  if (out->parse_key && out->separator.empty()) {
    return Status::invalid_argument("--property key.separator: empty");
  }
  if (properties.count("null.marker") != 0) out->null_marker = properties["null.marker"];
  if (Status s = producer_flags(flags, &out->producer); !s.ok()) return s;
  int64_t batch_size = 16384;
  int64_t retries = out->producer.retries;
  if (Status s = int_flag(flags, "--partition", 0, INT32_MAX, &out->partition); !s.ok()) return s;
  if (Status s = int_flag(flags, "--batch-size", 1, 64 << 20, &batch_size); !s.ok()) return s;
  if (Status s = int_flag(flags, "--linger-ms", 0, 3600000, &out->linger_ms); !s.ok()) return s;
  if (Status s = int_flag(flags, "--message-send-max-retries", 0, 1000, &retries); !s.ok()) return s;
  out->producer.batch_bytes = static_cast<size_t>(batch_size);
  out->producer.retries = static_cast<int>(retries);
  out->producer.broker_timeout_ms = static_cast<int32_t>(out->client.request_timeout_ms);
  return Status();
}

// Sends one input line (key and value split as the settings say); false
// when the line is refused (reported on stderr).
bool send_line(client::Producer& producer, const ProduceSettings& settings, const std::string& line,
               uint64_t line_number) {
  std::optional<std::span<const uint8_t>> key;
  std::string_view value_text = line;
  std::string key_text;
  if (settings.parse_key) {
    size_t at = line.find(settings.separator);
    if (at == std::string::npos) {
      std::fprintf(stderr, "eddy produce: line %llu: no key separator found; skipped\n",
                   static_cast<unsigned long long>(line_number));
      return false;
    }
    key_text = line.substr(0, at);
    value_text = std::string_view(line).substr(at + settings.separator.size());
    if (!(settings.null_marker && key_text == *settings.null_marker)) key = bytes_of(key_text);
  }
  std::optional<std::span<const uint8_t>> value;
  if (!(settings.null_marker && value_text == *settings.null_marker)) {
    value = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(value_text.data()), value_text.size());
  }
  Status s = producer.send(settings.topic, static_cast<int32_t>(settings.partition), key, value,
                           port::wall_clock_millis());
  if (s.ok()) return true;
  std::fprintf(stderr, "eddy produce: line %llu: %s\n", static_cast<unsigned long long>(line_number),
               s.message().c_str());
  return false;
}

// Standard input, line by line, until its end: flushed linger_ms after the
// first unsent line. Returns the number of lines; *bad_lines those refused.
uint64_t send_input(client::Producer& producer, const ProduceSettings& settings, uint64_t* bad_lines) {
  std::ios::sync_with_stdio(false);  // std::cin reads what a pipe or terminal has, line by line
  LineQueue queue;
  std::thread reader(read_lines, &queue);
  uint64_t line_number = 0;
  bool unsent = false;
  int64_t flush_at = 0;
  std::vector<std::string> lines;
  for (bool more = true; more;) {
    int64_t wait = unsent ? std::max<int64_t>(0, flush_at - port::monotonic_millis()) : -1;
    more = queue.take(wait, &lines);
    for (const std::string& line : lines) {
      if (!send_line(producer, settings, line, ++line_number)) {
        ++*bad_lines;
      } else if (!unsent) {
        unsent = true;
        flush_at = port::monotonic_millis() + settings.linger_ms;
      }
    }
    if (unsent && (!more || port::monotonic_millis() >= flush_at)) {
      Status s = producer.flush();
      if (!s.ok()) std::fprintf(stderr, "eddy produce: %s\n", s.message().c_str());
      unsent = false;
    }
  }
  reader.join();
  return line_number;
}

}  // namespace

int run_produce(const std::vector<std::string>& args) {
  ToolFlags flags;
  int exit_code = kExitOk;
  if (!parse_tool_args(kTool, args, kFlags, usage(), &flags, &exit_code)) return exit_code;
  ProduceSettings settings;
  if (Status bad = produce_settings(flags, &settings); !bad.ok()) return usage_error(kTool, bad, usage());

  client::Client client(settings.client);
  Status s = client.bootstrap();
  if (!s.ok()) return runtime_error(kTool, s);
  // Check the topic (creating it where the broker auto-creates topics) and
  // the partition before reading any input.
  client::Producer producer(&client, settings.producer);
  int32_t partition_count = 0;
  s = producer.partition_count(settings.topic, &partition_count);
  if (!s.ok()) {
    if (s.code() == Status::Code::kNotFound) {
      return runtime_error(kTool, "topic '" + settings.topic + "' does not exist");
    }
    return runtime_error(kTool, s);
  }
  if (settings.partition >= partition_count) {
    return runtime_error(kTool, "topic '" + settings.topic + "' has no partition " +
                                    std::to_string(settings.partition) + " (it has " +
                                    std::to_string(partition_count) + ")");
  }
  producer.on_delivery([](const client::DeliveryReport& report) {
    if (report.status.ok()) return;
    std::fprintf(stderr, "eddy produce: %d record%s to %s failed: %s\n", report.record_count,
                 report.record_count == 1 ? "" : "s", report.tp.to_string().c_str(), report.status.message().c_str());
  });
  uint64_t bad_lines = 0;
  const uint64_t lines = send_input(producer, settings, &bad_lines);
  const uint64_t failed = producer.records_failed() + bad_lines;
  if (failed > 0) {
    std::fprintf(stderr, "eddy produce: %llu of %llu records failed\n", static_cast<unsigned long long>(failed),
                 static_cast<unsigned long long>(lines));
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace eddy::app
