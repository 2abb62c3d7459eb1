#include "broker/controller_records.h"

#include <cstring>
#include <span>

#include "port/port.h"
#include "protocol/codec.h"

namespace eddy::broker {
namespace {

constexpr size_t kHeaderBytes = 3;  // type, version
constexpr std::string_view kSnapshotMagic = "EDDYCS01";

void put_u32(std::string* out, uint32_t v) {
  const char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                         static_cast<char>(v)};
  out->append(bytes, 4);
}

uint32_t get_u32(std::string_view bytes, size_t at) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data() + at);
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

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

std::string encode_controller_snapshot(const std::vector<ControllerRecord>& records) {
  std::string out(kSnapshotMagic);
  put_u32(&out, static_cast<uint32_t>(records.size()));
  for (const ControllerRecord& r : records) {
    const std::string payload = encode_controller_record(r);
    put_u32(&out, static_cast<uint32_t>(payload.size()));
    out += payload;
  }
  put_u32(&out, port::crc32c(0, out.data(), out.size()));
  return out;
}

Status decode_controller_snapshot(std::string_view bytes, std::vector<ControllerRecord>* out) {
  out->clear();
  const size_t fixed = kSnapshotMagic.size() + 4 + 4;
  if (bytes.size() < fixed || bytes.substr(0, kSnapshotMagic.size()) != kSnapshotMagic) {
    return Status::corruption("controller snapshot: not a snapshot (no EDDYCS01 header)");
  }
  const size_t body = bytes.size() - 4;
  if (get_u32(bytes, body) != port::crc32c(0, bytes.data(), body)) {
    return Status::corruption("controller snapshot: CRC mismatch");
  }
  const uint32_t count = get_u32(bytes, kSnapshotMagic.size());
  size_t at = kSnapshotMagic.size() + 4;
  std::vector<ControllerRecord> records;
  for (uint32_t i = 0; i < count; ++i) {
    if (body - at < 4) return Status::corruption("controller snapshot: cut short at record " + std::to_string(i));
    const uint32_t size = get_u32(bytes, at);
    at += 4;
    if (body - at < size) return Status::corruption("controller snapshot: record " + std::to_string(i) + " cut short");
    ControllerRecord record;
    Status s = decode_controller_record(bytes.substr(at, size), &record);
    if (!s.ok()) return s.with_context("controller snapshot record " + std::to_string(i));
    records.push_back(std::move(record));
    at += size;
  }
  if (at != body) return Status::corruption("controller snapshot: bytes after its last record");
  *out = std::move(records);
  return Status();
}

}  // namespace eddy::broker
