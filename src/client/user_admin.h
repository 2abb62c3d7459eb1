// SCRAM users over a Client: the operations of `kafka-configs
// --entity-type users` (DescribeUserScramCredentials and
// AlterUserScramCredentials). The caller salts the password (as Kafka's
// admin client does): the password itself never leaves the machine it was
// typed on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/client.h"
#include "port/status.h"

namespace eddy::client {

struct ScramCredentialInfo {
  std::string user;
  int8_t mechanism = 0;  // Kafka's id: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512
  int32_t iterations = 0;
};

struct ScramUpsertion {
  std::string user;
  int8_t mechanism = 0;
  int32_t iterations = 0;
  std::vector<uint8_t> salt;
  std::vector<uint8_t> salted_password;
};

struct ScramDeletion {
  std::string user;
  int8_t mechanism = 0;
};

// users empty: every user. A named user without credentials is kNotFound
// (the broker's RESOURCE_NOT_FOUND).
Status describe_scram_users(Client* client, const std::vector<std::string>& users,
                            std::vector<ScramCredentialInfo>* out);
// One request; the first per-user error, as the broker's error code with
// its message.
Status alter_scram_users(Client* client, const std::vector<ScramDeletion>& deletions,
                         const std::vector<ScramUpsertion>& upsertions);

}  // namespace eddy::client
