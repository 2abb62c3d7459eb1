// What a central cluster's error for one forwarded batch means for the link.
#pragma once

#include "protocol/errors.h"

namespace eddy::forward {

enum class UplinkErrorKind {
  // Transient (leader moved, timeouts, not enough replicas): resend after a
  // backoff, with fresh metadata.
  kRetriable,
  // Stops the partition until someone fixes the cause (the central topic is
  // missing, the link may not write, the batch will never fit).
  kPausesPartition,
  // The central cluster does not (or no longer) know this producer's
  // sequence for the partition: a new producer id, sequences from 0.
  kProducerLost,
  // Another producer took over the id (a newer epoch): a new producer id.
  kProducerFenced,
};

UplinkErrorKind classify_uplink_error(protocol::ErrorCode code);

}  // namespace eddy::forward
