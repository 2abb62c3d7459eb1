// The consumer protocol's embedded data: a consumer's subscription travels
// in JoinGroup's protocol metadata and its assignment in SyncGroup's
// assignment bytes, each as an int16 version followed by the struct of that
// version (no header, no size prefix).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "protocol/generated/consumer_protocol.h"
#include "protocol/wire.h"

namespace eddy::protocol {

// Writes the version and the struct. Non-ok when version is out of range or
// the struct holds a value that version cannot carry.
Status encode_consumer_subscription(const ConsumerProtocolSubscription& s, int16_t version,
                                    std::vector<uint8_t>* out);
Status encode_consumer_assignment(const ConsumerProtocolAssignment& a, int16_t version,
                                  std::vector<uint8_t>* out);

// Reads the version and the struct. As Kafka's consumers do, a version
// newer than the codec knows is decoded as the newest known version and
// bytes after the struct are ignored (newer versions only append fields).
// *version is set to the version found in the bytes.
Status decode_consumer_subscription(std::span<const uint8_t> bytes, ConsumerProtocolSubscription* out,
                                    int16_t* version);
Status decode_consumer_assignment(std::span<const uint8_t> bytes, ConsumerProtocolAssignment* out,
                                  int16_t* version);

}  // namespace eddy::protocol
