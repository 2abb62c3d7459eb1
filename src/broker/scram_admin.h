// AlterUserScramCredentials and DescribeUserScramCredentials on the meta
// store's credentials, with Kafka's per-user results (its
// ScramControlManager and ScramImage): pure functions of the request and
// the store, so that the tests can run them without a connection.
#pragma once

#include "meta/scram_credential_store.h"
#include "protocol/generated/messages.h"

namespace eddy::broker {

// Per user: UNACCEPTABLE_CREDENTIAL (empty name, iterations outside
// 4096..16384, a salted password that is not digest-sized, an empty salt),
// UNSUPPORTED_SASL_MECHANISM (mechanism id not 1 or 2), RESOURCE_NOT_FOUND
// (deleting a credential that does not exist), DUPLICATE_RESOURCE (a user
// named twice in the request, across deletions and upsertions, whatever
// the mechanisms: Kafka's rule). The others are written in one
// transaction; when that fails every one of them gets UNKNOWN_SERVER_ERROR.
protocol::AlterUserScramCredentialsResponse alter_user_scram_credentials(
    const protocol::AlterUserScramCredentialsRequest& request, meta::ScramCredentialStore* store);

// users null or empty: every user with a credential. Otherwise per named
// user its mechanisms and iterations, RESOURCE_NOT_FOUND for a user
// without any, DUPLICATE_RESOURCE for a user named twice.
protocol::DescribeUserScramCredentialsResponse describe_user_scram_credentials(
    const protocol::DescribeUserScramCredentialsRequest& request, meta::ScramCredentialStore* store);

}  // namespace eddy::broker
