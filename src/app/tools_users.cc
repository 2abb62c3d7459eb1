// eddy users: SCRAM credentials of a running broker (what kafka-configs
// --entity-type users --add-config 'SCRAM-SHA-512=[password=...]' does):
// the password is salted here (random salt, PBKDF2) and only the salted
// password travels, in AlterUserScramCredentials; the broker keeps StoredKey
// and ServerKey. The same credentials serve SCRAM and PLAIN logins.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli.h"
#include "app/tool_flags.h"
#include "app/tools.h"
#include "client/client.h"
#include "client/user_admin.h"
#include "security/crypto.h"
#include "security/random.h"
#include "security/scram_credential.h"

namespace eddy::app {
namespace {

constexpr const char* kTool = "users";

constexpr FlagSpec kFlags[] = {
    {"--bootstrap-server", "HOST:PORT[,...]", false, "broker to connect to (required)"},
    {"--command-config", "FILE", false, "Kafka client properties: security.protocol, sasl.*, ssl.* (PEM)"},
    {"--add", "NAME", false, "add or replace NAME's credential of --mechanism"},
    {"--delete", "NAME", false, "delete NAME's credential of --mechanism, or all of NAME's"},
    {"--list", nullptr, false, "list users, mechanisms and iteration counts"},
    {"--mechanism", "M", false, "SCRAM-SHA-512 (default for --add) or SCRAM-SHA-256"},
    {"--iterations", "N", false, "--add: PBKDF2 iterations, 4096..16384 (default 4096, as kafka-configs)"},
    {"--password-file", "FILE", false, "--add: the password is FILE's first line (default: stdin's first line)"},
    {"--request-timeout-ms", "MS", false, "per request (default 30000)"},
    {"--help", nullptr, false, "this text"},
};

std::string usage() {
  return describe_flags("eddy users --bootstrap-server HOST:PORT (--add NAME|--delete NAME|--list) [options]",
                        kFlags);
}

Status read_password(const ToolFlags& flags, std::string* out) {
  const std::string* file = flags.value("--password-file");
  bool got = false;
  if (file != nullptr) {
    std::ifstream in(*file);
    if (!in) {
      return Status::invalid_argument("cannot read --password-file " + *file);
    }
    got = static_cast<bool>(std::getline(in, *out));
  } else {
    got = static_cast<bool>(std::getline(std::cin, *out));
  }
  if (!out->empty() && out->back() == '\r') out->pop_back();
  if (!got || out->empty()) {
    return Status::invalid_argument("empty password");
  }
  return Status();
}

int do_add(client::Client& client, const ToolFlags& flags, const std::string& user,
           security::ScramMechanism mechanism) {
  int64_t iterations = security::kMinScramIterations;
  if (Status bad = int_flag(flags, "--iterations", security::kMinScramIterations, security::kMaxScramIterations,
                            &iterations);
      !bad.ok()) {
    return usage_error(kTool, bad, usage());
  }
  std::string password;
  if (Status s = read_password(flags, &password); !s.ok()) return runtime_error(kTool, s);
  client::ScramUpsertion u;
  u.user = user;
  u.mechanism = static_cast<int8_t>(mechanism);
  u.iterations = static_cast<int32_t>(iterations);
  u.salt.resize(security::kScramSaltBytes);
  Status s = security::random_bytes(u.salt.data(), u.salt.size());
  if (s.ok()) {
    s = security::pbkdf2(security::scram_hash(mechanism), password, u.salt, static_cast<uint32_t>(iterations),
                         &u.salted_password);
  }
  if (s.ok()) s = client::alter_scram_users(&client, {}, {u});
  if (!s.ok()) return runtime_error(kTool, s);
  std::printf("Added %s credential of user '%s' (%d iterations).\n", security::scram_mechanism_name(mechanism),
              user.c_str(), u.iterations);
  return kExitOk;
}

int do_delete(client::Client& client, const std::string& user, const security::ScramMechanism* mechanism) {
  std::vector<int8_t> mechanisms;
  if (mechanism != nullptr) {
    mechanisms.push_back(static_cast<int8_t>(*mechanism));
  } else {
    std::vector<client::ScramCredentialInfo> infos;
    if (Status s = client::describe_scram_users(&client, {user}, &infos); !s.ok()) return runtime_error(kTool, s);
    for (const auto& info : infos) mechanisms.push_back(info.mechanism);
  }
  // One request per mechanism: Kafka refuses a user named twice in one.
  for (int8_t m : mechanisms) {
    if (Status s = client::alter_scram_users(&client, {{user, m}}, {}); !s.ok()) return runtime_error(kTool, s);
    const auto name = security::scram_mechanism_from_id(m);
    std::printf("Deleted %s credential of user '%s'.\n", name ? security::scram_mechanism_name(*name) : "?",
                user.c_str());
  }
  return kExitOk;
}

int do_list(client::Client& client) {
  std::vector<client::ScramCredentialInfo> infos;
  if (Status s = client::describe_scram_users(&client, {}, &infos); !s.ok()) return runtime_error(kTool, s);
  for (const auto& info : infos) {
    const auto name = security::scram_mechanism_from_id(info.mechanism);
    std::printf("%s %s iterations=%d\n", info.user.c_str(), name ? security::scram_mechanism_name(*name) : "?",
                info.iterations);
  }
  return kExitOk;
}

}  // namespace

int run_users(const std::vector<std::string>& args) {
  ToolFlags flags;
  int exit_code = kExitOk;
  if (!parse_tool_args(kTool, args, kFlags, usage(), &flags, &exit_code)) return exit_code;
  const int actions = flags.has("--add") + flags.has("--delete") + flags.has("--list");
  if (actions != 1) return usage_error(kTool, "give exactly one of --add, --delete, --list", usage());
  security::ScramMechanism mechanism = security::ScramMechanism::kSha512;
  if (const std::string* m = flags.value("--mechanism")) {
    auto parsed = security::parse_scram_mechanism(*m);
    if (!parsed) return usage_error(kTool, "--mechanism: SCRAM-SHA-512 or SCRAM-SHA-256, not '" + *m + "'", usage());
    mechanism = *parsed;
  }
  if (!flags.has("--add") && (flags.has("--iterations") || flags.has("--password-file"))) {
    return usage_error(kTool, "--iterations and --password-file go with --add", usage());
  }
  const std::string* user = flags.has("--add") ? flags.value("--add") : flags.value("--delete");
  if (user != nullptr && user->empty()) return usage_error(kTool, "empty user name", usage());
  client::ClientOptions options;
  if (Status bad = client_options_from_flags(flags, &options); !bad.ok()) return usage_error(kTool, bad, usage());
  client::Client client(options);
  if (Status s = client.bootstrap(); !s.ok()) return runtime_error(kTool, s);
  if (flags.has("--list")) return do_list(client);
  if (flags.has("--add")) return do_add(client, flags, *user, mechanism);
  return do_delete(client, *user, flags.has("--mechanism") ? &mechanism : nullptr);
}

}  // namespace eddy::app
