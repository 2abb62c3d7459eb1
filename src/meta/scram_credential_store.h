// SCRAM credentials (what AlterUserScramCredentials and `eddy users`
// write, what SASL authentication reads): per user and mechanism the salt,
// the iteration count, StoredKey and ServerKey. Never a password, never a
// salted password (security/scram_credential.h says why these suffice).
//
// Also the broker's SASL secrets: random keys generated once and kept here
// so that what they derive (the fake credentials answered for unknown
// users) stays the same across restarts.
//
// The store checks shapes only (mechanism 1 or 2, iterations >= 4096,
// non-empty blobs); the broker checks Kafka's rules before writing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "meta/sqlite_db.h"
#include "port/status.h"

namespace eddy::meta {

struct ScramCredentialRow {
  std::string user;
  int8_t mechanism = 0;  // Kafka's ScramMechanism id: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512
  std::vector<uint8_t> salt;
  std::vector<uint8_t> stored_key;
  std::vector<uint8_t> server_key;
  int32_t iterations = 0;

  bool operator==(const ScramCredentialRow&) const = default;
};

struct ScramCredentialKey {
  std::string user;
  int8_t mechanism = 0;
};

class ScramCredentialStore {
 public:
  explicit ScramCredentialStore(Database* db) : db_(db) {}

  // Deletes then upserts (replacing a user's credential of the same
  // mechanism), all in one transaction; nothing is written when one row is
  // invalid (invalid_argument). Deleting what is not there is not an error.
  Status alter(const std::vector<ScramCredentialKey>& deletions, const std::vector<ScramCredentialRow>& upsertions);
  Status upsert(const ScramCredentialRow& row) { return alter({}, {row}); }
  Status remove(const ScramCredentialKey& key) { return alter({key}, {}); }

  // *found false (and ok) when the user has no credential of that mechanism.
  Status get(const std::string& user, int8_t mechanism, ScramCredentialRow* out, bool* found);
  // Every credential, by user then mechanism.
  Status list(std::vector<ScramCredentialRow>* out);

  // The secret called name into *out: the one kept, or, the first time,
  // fresh (which is then kept). REQUIRES: fresh holds at least 16 random
  // bytes.
  Status secret(const std::string& name, const std::vector<uint8_t>& fresh, std::vector<uint8_t>* out);

 private:
  Database* db_;
};

}  // namespace eddy::meta
