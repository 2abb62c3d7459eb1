#include "app/cli.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "app/broker_config.h"
#include "app/serve.h"
#include "app/tools.h"
#include "app/tools_groups.h"
#include "app/version.h"

namespace eddy::app {
namespace {

const char kUsage[] =
    "eddy " EDDY_VERSION " - a small Kafka-protocol broker for gateways\n"
    "\n"
    "Usage:\n"
    "  eddy serve [CONFIG] [--override key=value]...   run the broker\n"
    "  eddy topics --bootstrap-server B ...             create, list, describe, alter, delete topics\n"
    "  eddy produce --bootstrap-server B --topic T      write stdin lines as records\n"
    "  eddy consume --bootstrap-server B --topic T      print records to stdout\n"
    "  eddy groups --bootstrap-server B ...             list, describe consumer groups, reset offsets\n"
    "  eddy users --bootstrap-server B ...              add, delete, list SASL users (SCRAM credentials)\n"
    "  eddy forward status [--data-dir DIR]             store-and-forward links of a running eddy\n"
    "  eddy help [config]                               this text, or the configuration reference\n"
    "  eddy --version                                   print the version\n"
    "\n"
    "CONFIG is a Kafka-style .properties file (see config/gateway.properties).\n"
    "Each tool prints its options with --help.\n";

}  // namespace

int run_cli(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  const std::string& command = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "--version" || command == "version") {
    std::printf("eddy %s\n", EDDY_VERSION);
    return kExitOk;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    if (!rest.empty() && rest[0] == "config") {
      std::fputs(describe_broker_schema_markdown().c_str(), stdout);
      return kExitOk;
    }
    if (!rest.empty()) {
      std::fprintf(stderr, "eddy help: unknown topic '%s' (try: eddy help config)\n", rest[0].c_str());
      return kExitUsage;
    }
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (command == "serve") return run_serve(rest);
  if (command == "topics") return run_topics(rest);
  if (command == "produce") return run_produce(rest);
  if (command == "consume") return run_consume(rest);
  if (command == "groups") return run_groups(rest);
  if (command == "users") return run_users(rest);
  if (command == "forward") return run_forward(rest);
  std::fprintf(stderr, "eddy: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return kExitUsage;
}

}  // namespace eddy::app
