#include "protocol/consumer_protocol.h"

#include <algorithm>
#include <string>

#include "protocol/codec.h"

namespace eddy::protocol {

namespace {

template <typename M>
Status encode_versioned(const M& m, int16_t version, std::vector<uint8_t>* out) {
  OutputBuffer buffer;
  Writer w(&buffer);
  w.write_int16(version);
  Status s = encode(m, version, &buffer);
  out->assign(buffer.memory(), buffer.memory() + buffer.memory_size());
  return s;
}

template <typename M>
Status decode_versioned(std::span<const uint8_t> bytes, M* out, int16_t* version) {
  *out = M{};
  Reader r(bytes, M::kName);
  r.field("version");
  *version = r.read_int16();
  if (!r.ok()) return Status::protocol_error(r.error());
  if (*version < M::kMinVersion) {
    return Status::protocol_error(std::string(M::kName) + ": unsupported version " + std::to_string(*version));
  }
  const int16_t decode_as = std::min<int16_t>(*version, M::kMaxVersion);
  size_t consumed = 0;
  return decode_prefix(bytes.subspan(r.position()), decode_as, out, &consumed);
}

}  // namespace

Status encode_consumer_subscription(const ConsumerProtocolSubscription& s, int16_t version,
                                    std::vector<uint8_t>* out) {
  return encode_versioned(s, version, out);
}

Status encode_consumer_assignment(const ConsumerProtocolAssignment& a, int16_t version,
                                  std::vector<uint8_t>* out) {
  return encode_versioned(a, version, out);
}

Status decode_consumer_subscription(std::span<const uint8_t> bytes, ConsumerProtocolSubscription* out,
                                    int16_t* version) {
  return decode_versioned(bytes, out, version);
}

Status decode_consumer_assignment(std::span<const uint8_t> bytes, ConsumerProtocolAssignment* out,
                                  int16_t* version) {
  return decode_versioned(bytes, out, version);
}

}  // namespace eddy::protocol
