#include "broker/scram_admin.h"

#include <map>
#include <set>

#include "broker/broker.h"
#include "port/log.h"
#include "protocol/errors.h"
#include "security/scram_credential.h"

namespace eddy::broker {

using protocol::ErrorCode;
using AlterResult = protocol::AlterUserScramCredentialsResponse::AlterUserScramCredentialsResult;
using DescribeResult = protocol::DescribeUserScramCredentialsResponse::DescribeUserScramCredentialsResult;

namespace {

struct Refusal {
  ErrorCode code = ErrorCode::kNone;
  std::string message;
};

Refusal check_name_and_mechanism(const std::string& name, int8_t mechanism) {
  if (name.empty()) return {ErrorCode::kUnacceptableCredential, "Username must not be empty"};
  if (!security::scram_mechanism_from_id(mechanism)) {
    return {ErrorCode::kUnsupportedSaslMechanism, "Unknown SCRAM mechanism"};
  }
  return {};
}

Refusal check_deletion(const protocol::AlterUserScramCredentialsRequest::ScramCredentialDeletion& d,
                       meta::ScramCredentialStore* store) {
  Refusal r = check_name_and_mechanism(d.name, d.mechanism);
  if (r.code != ErrorCode::kNone) return r;
  meta::ScramCredentialRow row;
  bool found = false;
  if (Status s = store->get(d.name, d.mechanism, &row, &found); !s.ok()) {
    return {ErrorCode::kUnknownServerError, s.message()};
  }
  if (!found) return {ErrorCode::kResourceNotFound, "Attempt to delete a user credential that does not exist"};
  return {};
}

Refusal make_row(const protocol::AlterUserScramCredentialsRequest::ScramCredentialUpsertion& u,
                 meta::ScramCredentialRow* out) {
  Refusal r = check_name_and_mechanism(u.name, u.mechanism);
  if (r.code != ErrorCode::kNone) return r;
  if (u.iterations < security::kMinScramIterations) return {ErrorCode::kUnacceptableCredential, "Too few iterations"};
  if (u.iterations > security::kMaxScramIterations) return {ErrorCode::kUnacceptableCredential, "Too many iterations"};
  security::ScramCredential credential;
  Status s = security::credential_from_salted_password(*security::scram_mechanism_from_id(u.mechanism), u.salt,
                                                       u.salted_password, u.iterations, &credential);
  if (!s.ok()) return {ErrorCode::kUnacceptableCredential, s.message()};
  out->user = u.name;
  out->mechanism = u.mechanism;
  out->salt = std::move(credential.salt);
  out->stored_key = std::move(credential.stored_key);
  out->server_key = std::move(credential.server_key);
  out->iterations = u.iterations;
  return {};
}

AlterResult result(const std::string& user, ErrorCode code, std::string message) {
  AlterResult r;
  r.user = user;
  r.error_code = protocol::to_int(code);
  if (code == ErrorCode::kNone) {
    r.error_message = std::nullopt;
  } else {
    r.error_message = std::move(message);
  }
  return r;
}

}  // namespace

protocol::AlterUserScramCredentialsResponse alter_user_scram_credentials(
    const protocol::AlterUserScramCredentialsRequest& request, meta::ScramCredentialStore* store) {
  // Kafka's order: deletions, then upsertions; a user met twice is refused
  // (and what was accepted for it dropped).
  std::map<std::string, meta::ScramCredentialKey> deletions;
  std::map<std::string, meta::ScramCredentialRow> upsertions;
  std::map<std::string, Refusal> refused;
  const std::string duplicate = "A user credential cannot be altered twice in the same request";
  for (const auto& d : request.deletions) {
    if (refused.count(d.name)) continue;
    if (deletions.erase(d.name)) {
      refused[d.name] = {ErrorCode::kDuplicateResource, duplicate};
    } else if (Refusal r = check_deletion(d, store); r.code != ErrorCode::kNone) {
      refused[d.name] = std::move(r);
    } else {
      deletions[d.name] = {d.name, d.mechanism};
    }
  }
  for (const auto& u : request.upsertions) {
    if (refused.count(u.name)) continue;
    meta::ScramCredentialRow row;
    if (deletions.erase(u.name) + upsertions.erase(u.name) > 0) {
      refused[u.name] = {ErrorCode::kDuplicateResource, duplicate};
    } else if (Refusal r = make_row(u, &row); r.code != ErrorCode::kNone) {
      refused[u.name] = std::move(r);
    } else {
      upsertions[u.name] = std::move(row);
    }
  }
  std::vector<meta::ScramCredentialKey> delete_keys;
  std::vector<meta::ScramCredentialRow> rows;
  for (auto& [name, key] : deletions) delete_keys.push_back(key);
  for (auto& [name, row] : upsertions) rows.push_back(row);
  const Status s = store->alter(delete_keys, rows);
  if (!s.ok()) EDDY_LOG_ERROR("AlterUserScramCredentials: {}", s.message());
  protocol::AlterUserScramCredentialsResponse response;
  const ErrorCode written = s.ok() ? ErrorCode::kNone : ErrorCode::kUnknownServerError;
  for (const auto& [name, key] : deletions) response.results.push_back(result(name, written, s.message()));
  for (const auto& [name, row] : upsertions) response.results.push_back(result(name, written, s.message()));
  for (const auto& [name, r] : refused) response.results.push_back(result(name, r.code, r.message));
  return response;
}

protocol::DescribeUserScramCredentialsResponse describe_user_scram_credentials(
    const protocol::DescribeUserScramCredentialsRequest& request, meta::ScramCredentialStore* store) {
  protocol::DescribeUserScramCredentialsResponse response;
  std::vector<meta::ScramCredentialRow> all;
  if (Status s = store->list(&all); !s.ok()) {
    response.error_code = protocol::to_int(ErrorCode::kUnknownServerError);
    response.error_message = s.message();
    return response;
  }
  std::map<std::string, std::vector<const meta::ScramCredentialRow*>> by_user;
  for (const auto& row : all) by_user[row.user].push_back(&row);
  // name -> named more than once
  std::map<std::string, bool> wanted;
  if (!request.users.has_value() || request.users->empty()) {
    for (const auto& [user, rows] : by_user) wanted[user] = false;
  } else {
    for (const auto& u : *request.users) {
      auto [it, inserted] = wanted.emplace(u.name, false);
      if (!inserted) it->second = true;
    }
  }
  for (const auto& [user, twice] : wanted) {
    DescribeResult r;
    r.user = user;
    r.error_message = std::nullopt;
    auto found = by_user.find(user);
    if (twice) {
      r.error_code = protocol::to_int(ErrorCode::kDuplicateResource);
      r.error_message = "Cannot describe SCRAM credentials for the same user twice in a single request: " + user;
    } else if (found == by_user.end()) {
      r.error_code = protocol::to_int(ErrorCode::kResourceNotFound);
      r.error_message = "Attempt to describe a user credential that does not exist: " + user;
    } else {
      for (const meta::ScramCredentialRow* row : found->second) {
        protocol::DescribeUserScramCredentialsResponse::CredentialInfo info;
        info.mechanism = row->mechanism;
        info.iterations = row->iterations;
        r.credential_infos.push_back(info);
      }
    }
    response.results.push_back(std::move(r));
  }
  response.error_message = std::nullopt;
  return response;
}

void Broker::handle_describe_user_scram_credentials(RequestPtr request) {
  protocol::DescribeUserScramCredentialsRequest body;
  if (!decode(*request, &body)) return;
  if (!authorized_on_cluster(*request, security::AclOperation::kDescribe)) {
    protocol::DescribeUserScramCredentialsResponse refused;
    refused.error_code = protocol::to_int(ErrorCode::kClusterAuthorizationFailed);
    refused.error_message = "Cluster authorization failed.";
    respond(*request, refused);
    return;
  }
  respond(*request, describe_user_scram_credentials(body, &meta_->scram_credentials()));
}

void Broker::handle_alter_user_scram_credentials(RequestPtr request) {
  protocol::AlterUserScramCredentialsRequest body;
  if (!decode(*request, &body)) return;
  if (!authorized_on_cluster(*request, security::AclOperation::kAlter)) {
    // Kafka's error response: one result per user named.
    std::set<std::string> users;
    for (const auto& d : body.deletions) users.insert(d.name);
    for (const auto& u : body.upsertions) users.insert(u.name);
    protocol::AlterUserScramCredentialsResponse refused;
    for (const auto& user : users) {
      AlterResult r;
      r.user = user;
      r.error_code = protocol::to_int(ErrorCode::kClusterAuthorizationFailed);
      r.error_message = "Cluster authorization failed.";
      refused.results.push_back(std::move(r));
    }
    respond(*request, refused);
    return;
  }
  protocol::AlterUserScramCredentialsResponse response = alter_user_scram_credentials(body, &meta_->scram_credentials());
  for (const auto& r : response.results) {
    if (r.error_code == 0) {
      EDDY_LOG_INFO("SCRAM credentials of '{}' changed by {} ({})", r.user, request->client.peer,
                    request->client.listener);
    }
  }
  respond(*request, response);
}

}  // namespace eddy::broker
