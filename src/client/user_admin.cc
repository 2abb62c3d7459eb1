#include "client/user_admin.h"

#include "protocol/errors.h"
#include "protocol/generated/alter_user_scram_credentials.h"
#include "protocol/generated/describe_user_scram_credentials.h"

namespace eddy::client {

Status describe_scram_users(Client* client, const std::vector<std::string>& users,
                            std::vector<ScramCredentialInfo>* out) {
  out->clear();
  protocol::DescribeUserScramCredentialsResponse response;
  Status s = client->call<protocol::DescribeUserScramCredentialsRequest>(
      -1,
      [&](protocol::DescribeUserScramCredentialsRequest& request, int16_t) {
        if (users.empty()) {
          request.users.reset();
          return;
        }
        request.users.emplace();
        for (const std::string& u : users) request.users->push_back({u, {}});
      },
      &response);
  if (!s.ok()) return s;
  if (response.error_code != 0) {
    return protocol::broker_error(response.error_code, "describe SCRAM users", response.error_message);
  }
  for (const auto& r : response.results) {
    if (r.error_code != 0) return protocol::broker_error(r.error_code, "user '" + r.user + "'", r.error_message);
    for (const auto& c : r.credential_infos) out->push_back({r.user, c.mechanism, c.iterations});
  }
  return Status();
}

Status alter_scram_users(Client* client, const std::vector<ScramDeletion>& deletions,
                         const std::vector<ScramUpsertion>& upsertions) {
  protocol::AlterUserScramCredentialsResponse response;
  Status s = client->call<protocol::AlterUserScramCredentialsRequest>(
      -1,
      [&](protocol::AlterUserScramCredentialsRequest& request, int16_t) {
        for (const ScramDeletion& d : deletions) request.deletions.push_back({d.user, d.mechanism, {}});
        for (const ScramUpsertion& u : upsertions) {
          request.upsertions.push_back({u.user, u.mechanism, u.iterations, u.salt, u.salted_password, {}});
        }
      },
      &response);
  if (!s.ok()) return s;
  for (const auto& r : response.results) {
    if (r.error_code != 0) return protocol::broker_error(r.error_code, "user '" + r.user + "'", r.error_message);
  }
  return Status();
}

}  // namespace eddy::client
