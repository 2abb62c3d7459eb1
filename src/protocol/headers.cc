#include "protocol/headers.h"

#include <array>
#include <limits>

namespace eddy::protocol {

namespace {

constexpr int16_t kApiVersionsKey = static_cast<int16_t>(ApiKey::kApiVersions);

// api key -> index into kGeneratedApis, -1 when unknown.
constexpr int kLookupSize = 128;
constexpr std::array<int8_t, kLookupSize> make_lookup() {
  std::array<int8_t, kLookupSize> table{};
  for (auto& slot : table) slot = -1;
  int8_t i = 0;
  for (const ApiInfo& api : kGeneratedApis) {
    table[static_cast<size_t>(api.api_key)] = i++;
  }
  return table;
}
constexpr std::array<int8_t, kLookupSize> kLookup = make_lookup();

uint16_t load_be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }

}  // namespace

std::span<const ApiInfo> codec_apis() { return kGeneratedApis; }

const ApiInfo* find_api(int16_t api_key) {
  if (api_key < 0 || api_key >= kLookupSize) return nullptr;
  int8_t i = kLookup[static_cast<size_t>(api_key)];
  return i < 0 ? nullptr : &kGeneratedApis[i];
}

const char* api_name(int16_t api_key) {
  const ApiInfo* api = find_api(api_key);
  return api ? api->name : "Unknown";
}

bool is_supported(int16_t api_key, int16_t api_version) {
  const ApiInfo* api = find_api(api_key);
  return api != nullptr && api_version >= api->min_version && api_version <= api->max_version;
}

int16_t request_header_version(int16_t api_key, int16_t api_version) {
  const ApiInfo* api = find_api(api_key);
  return api != nullptr && api_version >= api->request_first_flexible ? 2 : 1;
}

int16_t response_header_version(int16_t api_key, int16_t api_version) {
  if (api_key == kApiVersionsKey) return 0;
  const ApiInfo* api = find_api(api_key);
  return api != nullptr && api_version >= api->response_first_flexible ? 1 : 0;
}

Status parse_request_header(std::span<const uint8_t> frame, ParsedRequestHeader* out) {
  *out = ParsedRequestHeader{};
  if (frame.size() < 8) {
    return Status::protocol_error("RequestHeader: frame of " + std::to_string(frame.size()) +
                         " bytes is shorter than the 8-byte header start");
  }
  const int16_t api_key = static_cast<int16_t>(load_be16(&frame[0]));
  const int16_t api_version = static_cast<int16_t>(load_be16(&frame[2]));
  const bool known = find_api(api_key) != nullptr;
  // For an unknown api key, header v1 still reads the client id (it is
  // encoded the same way in v1 and v2) for the log line.
  const int16_t header_version = known ? request_header_version(api_key, api_version) : 1;

  Reader r(frame, "RequestHeader");
  out->header.decode(r, header_version);
  out->header_version = header_version;
  if (!r.ok()) return Status::protocol_error(r.error());
  if (!known) return Status::protocol_error("RequestHeader: unknown api key " + std::to_string(api_key));
  if (api_version < 0) {
    return Status::protocol_error("RequestHeader: negative api version " + std::to_string(api_version));
  }
  out->body_offset = r.position();
  return Status();
}

Status parse_response_header(std::span<const uint8_t> frame, int16_t api_key, int16_t api_version,
                             int32_t* correlation_id, size_t* body_offset) {
  ResponseHeader header;
  Reader r(frame, "ResponseHeader");
  header.decode(r, response_header_version(api_key, api_version));
  if (!r.ok()) return Status::protocol_error(r.error());
  *correlation_id = header.correlation_id;
  *body_offset = r.position();
  return Status();
}

FrameMark begin_frame(OutputBuffer* out) {
  FrameMark mark;
  mark.size_before = out->size();
  mark.prefix_memory_offset = out->reserve(4);
  return mark;
}

Status end_frame(const FrameMark& mark, OutputBuffer* out) {
  const size_t frame_size = out->size() - mark.size_before - 4;
  if (frame_size > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return Status::protocol_error("frame of " + std::to_string(frame_size) + " bytes exceeds the int32 size prefix");
  }
  const uint32_t n = static_cast<uint32_t>(frame_size);
  const uint8_t prefix[4] = {static_cast<uint8_t>(n >> 24), static_cast<uint8_t>(n >> 16),
                             static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n)};
  out->patch(mark.prefix_memory_offset, prefix, 4);
  return Status();
}

void write_response_header(Writer& w, int16_t api_key, int16_t api_version, int32_t correlation_id) {
  ResponseHeader header;
  header.correlation_id = correlation_id;
  header.encode(w, response_header_version(api_key, api_version));
}

void write_request_header(Writer& w, int16_t api_key, int16_t api_version, int32_t correlation_id,
                          const std::optional<std::string>& client_id) {
  RequestHeader header;
  header.request_api_key = api_key;
  header.request_api_version = api_version;
  header.correlation_id = correlation_id;
  header.client_id = client_id;
  header.encode(w, request_header_version(api_key, api_version));
}

}  // namespace eddy::protocol
