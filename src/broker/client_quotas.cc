// DescribeClientQuotas: Eddy enforces no client quotas, so every filter
// matches nothing (an empty list, no error), which is what Kafka answers
// when none are set. kafka-configs --describe --entity-type users asks it
// before DescribeUserScramCredentials.
#include "broker/broker.h"

namespace eddy::broker {

void Broker::handle_describe_client_quotas(RequestPtr request) {
  protocol::DescribeClientQuotasRequest body;
  if (!decode(*request, &body)) return;
  protocol::DescribeClientQuotasResponse response;
  response.error_message = std::nullopt;
  response.entries.emplace();
  respond(*request, response);
}

}  // namespace eddy::broker
