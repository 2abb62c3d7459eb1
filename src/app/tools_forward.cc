// eddy forward: the store-and-forward links of a running eddy, asked over
// its control socket (<data dir>/eddy.sock, net/control_server.h).
//
//   eddy forward status [--config FILE [--override K=V]... | --data-dir DIR] [--json] [--watch SECONDS]
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "app/broker_config.h"
#include "app/cli.h"
#include "app/config.h"
#include "app/tool_flags.h"
#include "app/tools.h"
#include "net/control_client.h"

namespace eddy::app {
namespace {

constexpr const char* kTool = "forward";
// How long one status request may take (connect, ask, read the reply).
constexpr int64_t kRequestTimeoutMs = 10000;
// Clears the terminal and homes the cursor between --watch rounds.
constexpr const char* kClearScreen = "\033[H\033[2J";

constexpr FlagSpec kStatusFlags[] = {
    {"--config", "FILE", false, "the broker's properties file, as for eddy serve (default: none)"},
    {"--override", "KEY=VALUE", true, "a config override, as for eddy serve"},
    {"--data-dir", "DIR", false, "the broker's data directory (log.dirs) instead of --config"},
    {"--json", nullptr, false, "print JSON instead of a table"},
    {"--watch", "SECONDS", false, "repeat every SECONDS until interrupted"},
    {"--help", nullptr, false, "this text"},
};

std::string status_usage() {
  return describe_flags("eddy forward status [--config FILE [--override KEY=VALUE]... | --data-dir DIR] [--json] "
                        "[--watch SECONDS]",
                        kStatusFlags);
}

std::string forward_usage() {
  return "Usage: eddy forward COMMAND [options]\n"
         "\n"
         "Commands:\n"
         "  status    the store-and-forward links of the eddy running on a data directory\n"
         "\n"
         "The tool talks to that eddy over its control socket, <data dir>/eddy.sock.\n"
         "\n" +
         status_usage();
}

// The data directory from --data-dir, else log.dirs of the configuration
// `eddy serve FILE --override ...` would load. Returns kExitOk, or prints
// the error and returns kExitUsage.
int data_dir_from_flags(const ToolFlags& flags, std::string* data_dir) {
  if (const std::string* dir = flags.value("--data-dir")) {
    if (flags.has("--config") || flags.has("--override")) {
      return usage_error(kTool, "give --data-dir or --config/--override, not both", status_usage());
    }
    if (dir->empty()) return usage_error(kTool, "--data-dir: empty directory name", status_usage());
    *data_dir = *dir;
    return kExitOk;
  }
  const std::string* config_path = flags.value("--config");
  Config config(&broker_schema());
  std::vector<std::string> warnings;  // deprecated aliases: eddy serve reports them
  if (Status s = load_broker_config(config_path == nullptr ? std::string() : *config_path, flags.values("--override"),
                                    &config, &warnings);
      !s.ok()) {
    std::fprintf(stderr, "eddy %s: %s\n", kTool, s.message().c_str());  // "file:line: key: why", as eddy serve says it
    return kExitUsage;
  }
  *data_dir = config.get_string("log.dirs");
  if (data_dir->empty()) {
    std::fprintf(stderr, "eddy %s: log.dirs is empty\n", kTool);
    return kExitUsage;
  }
  return kExitOk;
}

std::string socket_path_for(const std::string& data_dir) {
  return data_dir + (data_dir.back() == '/' ? "" : "/") + "eddy.sock";
}

// One status request: ok with *body on an "ok" reply; otherwise a Status
// whose message completes "eddy forward: <message>" (kNotFound: nothing
// runs with that data directory).
Status fetch_status(const std::string& data_dir, bool json, std::string* body) {
  const std::string socket_path = socket_path_for(data_dir);
  std::string reply, why;
  net::ControlStatus status =
      net::control_request(socket_path, json ? "forward status json" : "forward status", kRequestTimeoutMs, &reply, &why);
  switch (status) {
    case net::ControlStatus::kOk:
      return net::parse_control_reply(reply, body);
    case net::ControlStatus::kNoSocket:
      return Status::not_found("no eddy is running with data directory " + data_dir + " (no control socket at " +
                               socket_path + ")");
    case net::ControlStatus::kRefused:
      return Status::not_found("no eddy is running with data directory " + data_dir + " (stale control socket at " +
                               socket_path + ": connection refused)");
    case net::ControlStatus::kTimeout:
      return Status::timeout(why);
    case net::ControlStatus::kFailed:
      break;
  }
  return Status::io_error(why);
}

void print_body(const std::string& body) {
  std::fwrite(body.data(), 1, body.size(), stdout);
  if (!body.empty() && body.back() != '\n') std::fputc('\n', stdout);
  std::fflush(stdout);
}

std::string local_time_now() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", std::localtime(&now));  // single-threaded tool
  return text;
}

int run_status(const std::vector<std::string>& args) {
  ToolFlags flags;
  int exit_code = kExitOk;
  if (!parse_tool_args(kTool, args, kStatusFlags, status_usage(), &flags, &exit_code)) return exit_code;
  int64_t watch_seconds = 0;
  if (Status bad = int_flag(flags, "--watch", 1, 86400, &watch_seconds); !bad.ok()) {
    return usage_error(kTool, bad, status_usage());
  }
  std::string data_dir;
  if (int rc = data_dir_from_flags(flags, &data_dir); rc != kExitOk) return rc;
  const bool json = flags.has("--json");

  std::string body;
  if (watch_seconds == 0) {
    if (Status s = fetch_status(data_dir, json, &body); !s.ok()) return runtime_error(kTool, s);
    print_body(body);
    return kExitOk;
  }
  // Like watch(1): a header, the latest answer (or error), until interrupted.
  for (;;) {
    Status fetched = fetch_status(data_dir, json, &body);
    std::printf("%sEvery %llds: eddy forward status (data directory %s)    %s\n\n", kClearScreen,
                static_cast<long long>(watch_seconds), data_dir.c_str(), local_time_now().c_str());
    if (fetched.ok()) {
      print_body(body);
    } else {
      std::fflush(stdout);
      runtime_error(kTool, fetched);
    }
    std::this_thread::sleep_for(std::chrono::seconds(watch_seconds));
  }
}

}  // namespace

int run_forward(const std::vector<std::string>& args) {
  if (args.empty()) return usage_error(kTool, "missing command", forward_usage());
  const std::string& command = args[0];
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(forward_usage().c_str(), stdout);
    return kExitOk;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "status") return run_status(rest);
  return usage_error(kTool, "unknown command '" + command + "'", forward_usage());
}

}  // namespace eddy::app
