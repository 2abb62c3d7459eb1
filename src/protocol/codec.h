// Decoding and encoding whole messages.
//
// Every generated message type M (protocol/generated/*.h) provides
//   static constexpr kName, kMinVersion, kMaxVersion (and kApiKey for APIs),
//   void decode(Reader&, int16_t version);
//   void encode(Writer&, int16_t version) const;
// These templates wrap them with the version check, the trailing-bytes check
// and the conversion of the Reader/Writer error into a Status.
//
// A decoded message owns all its values except `records` fields, which view
// the decoded buffer: keep the buffer alive while the message is in use.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "protocol/output_buffer.h"
#include "protocol/wire.h"

namespace eddy::protocol {

// Decodes `bytes` as version `version` of M into *out (which is reset
// first). base_offset is where bytes start within the frame, so that error
// messages give frame offsets. Bytes left over after the message are an
// error, unless `trailing` is given: then their count is stored there and
// they are ignored (Apache Kafka ignores bytes after a request's last field,
// and current librdkafka sends some after Metadata v12).
template <typename M>
Status decode(std::span<const uint8_t> bytes, int16_t version, M* out, size_t base_offset = 0,
              size_t* trailing = nullptr) {
  if (trailing != nullptr) *trailing = 0;
  *out = M{};
  if (version < M::kMinVersion || version > M::kMaxVersion) {
    return Status::protocol_error(std::string(M::kName) + ": version " + std::to_string(version) + " is outside " +
                         std::to_string(M::kMinVersion) + "-" + std::to_string(M::kMaxVersion));
  }
  Reader r(bytes, M::kName, base_offset);
  out->decode(r, version);
  if (r.ok() && r.remaining() != 0) {
    if (trailing != nullptr) {
      *trailing = r.remaining();
    } else {
      r.fail("%zu unexpected bytes after the message", r.remaining());
    }
  }
  return r.ok() ? Status() : Status::protocol_error(r.error());
}

// Like decode, but stops at the end of the message: *consumed is set to the
// bytes it took and anything after them is ignored (for data types that may
// be followed by fields of a newer version, e.g. ConsumerProtocol*).
template <typename M>
Status decode_prefix(std::span<const uint8_t> bytes, int16_t version, M* out, size_t* consumed) {
  *out = M{};
  *consumed = 0;
  if (version < M::kMinVersion || version > M::kMaxVersion) {
    return Status::protocol_error(std::string(M::kName) + ": version " + std::to_string(version) + " is outside " +
                         std::to_string(M::kMinVersion) + "-" + std::to_string(M::kMaxVersion));
  }
  Reader r(bytes, M::kName);
  out->decode(r, version);
  if (!r.ok()) return Status::protocol_error(r.error());
  *consumed = r.position();
  return Status();
}

// Appends version `version` of m to *out. A non-ok Status means m holds a
// value that the version cannot carry (a bug in the caller); the bytes
// appended are still a well-formed message, with that value dropped.
template <typename M>
Status encode(const M& m, int16_t version, OutputBuffer* out) {
  if (version < M::kMinVersion || version > M::kMaxVersion) {
    return Status::protocol_error(std::string(M::kName) + ": version " + std::to_string(version) + " is outside " +
                         std::to_string(M::kMinVersion) + "-" + std::to_string(M::kMaxVersion));
  }
  Writer w(out);
  m.encode(w, version);
  return w.ok() ? Status() : Status::protocol_error(std::string(M::kName) + ": " + w.error());
}

}  // namespace eddy::protocol
