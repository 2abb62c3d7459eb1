#include "broker/controller_records.h"

#include <span>

#include "protocol/codec.h"

namespace eddy::broker {
namespace {

constexpr size_t kHeaderBytes = 3;  // type, version

template <size_t I = 0>
Status decode_as(size_t index, int16_t version, std::span<const uint8_t> body, ControllerRecord* out) {
  if constexpr (I < std::variant_size_v<ControllerRecord>) {
    if (index != I) return decode_as<I + 1>(index, version, body, out);
    using R = std::variant_alternative_t<I, ControllerRecord>;
    R record;
    if (Status s = protocol::decode(body, version, &record); !s.ok()) {
      return Status::corruption("controller record: " + s.message());
    }
    *out = std::move(record);
    return Status();
  } else {
    return Status::corruption("controller record of unknown type " + std::to_string(index + 1));
  }
}

}  // namespace

std::string encode_controller_record(const ControllerRecord& record) {
  protocol::OutputBuffer buffer;
  std::visit(
      [&](const auto& r) {
        using R = std::decay_t<decltype(r)>;
        const uint8_t header[kHeaderBytes] = {static_cast<uint8_t>(record.index() + 1),
                                              static_cast<uint8_t>(static_cast<uint16_t>(R::kMaxVersion) >> 8),
                                              static_cast<uint8_t>(R::kMaxVersion & 0xff)};
        buffer.append(header, kHeaderBytes);
        // Cannot fail: every field exists in the newest version.
        (void)protocol::encode(r, R::kMaxVersion, &buffer);
      },
      record);
  return std::string(reinterpret_cast<const char*>(buffer.memory()), buffer.memory_size());
}

Status decode_controller_record(std::string_view payload, ControllerRecord* out) {
  if (payload.size() < kHeaderBytes) {
    return Status::corruption("controller record of " + std::to_string(payload.size()) + " bytes");
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(payload.data());
  const int type = static_cast<int8_t>(bytes[0]);
  const auto version = static_cast<int16_t>((bytes[1] << 8) | bytes[2]);
  if (type < 1 || static_cast<size_t>(type) > std::variant_size_v<ControllerRecord>) {
    return Status::corruption("controller record of unknown type " + std::to_string(type) +
                              " (written by a newer Eddy?)");
  }
  return decode_as(static_cast<size_t>(type - 1), version, std::span<const uint8_t>(bytes, payload.size()).subspan(kHeaderBytes), out);
}

const char* controller_record_name(const ControllerRecord& record) {
  return std::visit([](const auto& r) { return std::decay_t<decltype(r)>::kName; }, record);
}

}  // namespace eddy::broker
