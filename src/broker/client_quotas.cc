// DescribeClientQuotas: Eddy enforces no client quotas, so every filter
// matches nothing (an empty list, no error), which is what Kafka answers
// when none are set. kafka-configs --describe --entity-type users asks it
// before DescribeUserScramCredentials. With an authorizer it needs
// DESCRIBE_CONFIGS on the cluster (CLUSTER_AUTHORIZATION_FAILED).
#include "broker/broker.h"
#include "protocol/errors.h"

namespace eddy::broker {

void Broker::handle_describe_client_quotas(RequestPtr request) {
  protocol::DescribeClientQuotasRequest body;
  if (!decode(*request, &body)) return;
  protocol::DescribeClientQuotasResponse response;
  response.error_message = std::nullopt;
  if (!authorized_on_cluster(*request, security::AclOperation::kDescribeConfigs)) {
    response.error_code = protocol::to_int(protocol::ErrorCode::kClusterAuthorizationFailed);
    response.error_message = "Cluster authorization failed.";
    response.entries.reset();
    respond(*request, response);
    return;
  }
  response.entries.emplace();
  respond(*request, response);
}

}  // namespace eddy::broker
