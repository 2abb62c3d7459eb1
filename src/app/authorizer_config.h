// authorizer.class.name, super.users and allow.everyone.if.no.acl.found
// as the broker's AuthorizerOptions.
#pragma once

#include "app/config.h"
#include "broker/broker_options.h"
#include "port/status.h"

namespace eddy::app {

// Kafka's authorizer class names Eddy accepts as "on" (its own authorizer
// has StandardAuthorizer's semantics); empty is "off".
inline constexpr const char* kStandardAuthorizerClass = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
inline constexpr const char* kAclAuthorizerClass = "kafka.security.authorizer.AclAuthorizer";

// kInvalidArgument naming where the value came from when
// authorizer.class.name is another class, or a super.users entry is not of
// the form Type:name.
Status authorizer_from(const Config& config, broker::AuthorizerOptions* out);

}  // namespace eddy::app
