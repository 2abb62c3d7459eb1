#include "app/serve.h"

#include <cstdio>
#include <thread>

#include "app/broker_config.h"
#include "app/cli.h"
#include "app/version.h"
#include "port/log.h"
#include "port/port.h"

namespace eddy::app {
namespace {

struct ServeArgs {
  std::string config_path;
  std::vector<std::string> overrides;
};

bool parse_serve_args(const std::vector<std::string>& args, ServeArgs* out, std::string* error) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--override") {
      if (i + 1 == args.size()) {
        *error = "--override needs key=value";
        return false;
      }
      out->overrides.push_back(args[++i]);
    } else if (a.rfind("--override=", 0) == 0) {
      out->overrides.push_back(a.substr(11));
    } else if (!a.empty() && a[0] == '-') {
      *error = "unknown option '" + a + "'";
      return false;
    } else if (out->config_path.empty()) {
      out->config_path = a;
    } else {
      *error = "more than one config file given ('" + out->config_path + "', '" + a + "')";
      return false;
    }
  }
  return true;
}

}  // namespace

int run_serve(const std::vector<std::string>& args) {
  ServeArgs serve_args;
  std::string error;
  if (!parse_serve_args(args, &serve_args, &error)) {
    std::fprintf(stderr, "eddy serve: %s\nUsage: eddy serve [CONFIG] [--override key=value]...\n", error.c_str());
    return kExitUsage;
  }
  Config config(&broker_schema());
  std::vector<std::string> warnings;
  if (!load_broker_config(serve_args.config_path, serve_args.overrides, &config, &error, &warnings)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return kExitUsage;
  }
  port::LogLevel level = port::LogLevel::kInfo;
  port::parse_log_level(config.get_string("eddy.log.level").c_str(), &level);
  port::set_log_level(level);
  for (const std::string& w : warnings) EDDY_LOG_WARN("%s", w.c_str());

  // Signals are taken by a dedicated thread (sigwait), never by handlers.
  port::block_termination_signals();

  const std::string data_dir = config.get_string("log.dirs");
  if (auto ec = port::make_directories(data_dir)) {
    EDDY_LOG_ERROR("cannot create data directory %s: %s", data_dir.c_str(), ec.message().c_str());
    return kExitFailure;
  }
  port::File lock;
  if (auto ec = port::File::open(data_dir + "/.lock", port::OpenMode::kCreate, &lock)) {
    EDDY_LOG_ERROR("cannot open %s/.lock: %s", data_dir.c_str(), ec.message().c_str());
    return kExitFailure;
  }
  if (auto ec = lock.try_lock_exclusive()) {
    EDDY_LOG_ERROR("data directory %s is in use by another eddy process (%s)", data_dir.c_str(),
                   ec.message().c_str());
    return kExitFailure;
  }

  EDDY_LOG_INFO("eddy %s starting: config %s, data %s", EDDY_VERSION,
                serve_args.config_path.empty() ? "(defaults)" : serve_args.config_path.c_str(), data_dir.c_str());
  int sig = port::wait_for_termination_signal();
  EDDY_LOG_INFO("signal %d: shutting down", sig);
  return kExitOk;
}

}  // namespace eddy::app
