// Request and response frames: which header version each API version uses,
// parsing a request's header, and encoding whole frames (4-byte size prefix,
// header, body) into an OutputBuffer. Also the table of APIs the codec
// implements.
//
// Header versions follow the definitions' flexibleVersions: a flexible
// request uses request header v2 (tagged fields), otherwise v1; a flexible
// response uses response header v1, otherwise v0. ApiVersions responses
// always use response header v0, so that a client that does not yet know
// which versions the broker speaks can parse the answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "protocol/codec.h"
#include "protocol/generated/apis.h"
#include "protocol/generated/header.h"
#include "protocol/output_buffer.h"
#include "protocol/wire.h"

namespace eddy::protocol {

// ---------------------------------------------------------------------------
// The codec's API table
// ---------------------------------------------------------------------------

// Every API the codec implements, sorted by api key, with the versions it
// can decode and encode (a broker may advertise fewer).
std::span<const ApiInfo> codec_apis();
// nullptr when the codec does not know api_key.
const ApiInfo* find_api(int16_t api_key);
// "Produce", ... or "Unknown".
const char* api_name(int16_t api_key);
// True when the codec can decode and encode this version of this API.
bool is_supported(int16_t api_key, int16_t api_version);

// Header versions for an API version; versions above the codec's maximum
// are treated like the maximum (flexibleVersions are open-ended), which is
// what a broker needs to answer an ApiVersions request from a newer client.
// REQUIRES: find_api(api_key) != nullptr.
int16_t request_header_version(int16_t api_key, int16_t api_version);
int16_t response_header_version(int16_t api_key, int16_t api_version);

// ---------------------------------------------------------------------------
// Request frames (broker side)
// ---------------------------------------------------------------------------

struct ParsedRequestHeader {
  RequestHeader header;       // api key, version, correlation id, client id
  int16_t header_version = 0;
  size_t body_offset = 0;     // where the request body starts in the frame
};

// Parses the header of a request frame. `frame` is the frame without its
// 4-byte size prefix. Fails when the header is truncated or malformed and
// when the codec does not know the api key; on failure out->header still
// holds what could be read (api key, version and correlation id when the
// frame has 8 bytes; client id when readable) for the log line. A known api
// key with a version the codec does not support parses successfully: check
// is_supported() before decoding the body (ApiVersions answers
// UNSUPPORTED_VERSION, anything else closes the connection).
Status parse_request_header(std::span<const uint8_t> frame, ParsedRequestHeader* out);

// Decodes the body of a request whose header parse_request_header parsed.
// The body's records fields view `frame`.
template <typename M>
Status decode_request_body(std::span<const uint8_t> frame, const ParsedRequestHeader& header, M* out,
                           size_t* trailing = nullptr) {
  return decode(frame.subspan(header.body_offset), header.header.request_api_version, out, header.body_offset,
                trailing);
}

// Appends a response frame: size prefix, response header for M's api key
// and `version`, then the body. Non-ok (the frame is still well-formed)
// when the body holds a value `version` cannot carry; see encode().
template <typename M>
Status encode_response_frame(const M& body, int16_t version, int32_t correlation_id, OutputBuffer* out);

// ---------------------------------------------------------------------------
// Eddy as a client
// ---------------------------------------------------------------------------

// Appends a request frame: size prefix, request header, body.
template <typename M>
Status encode_request_frame(const M& body, int16_t version, int32_t correlation_id,
                            const std::optional<std::string>& client_id, OutputBuffer* out);

// Parses the header of a response frame (without its size prefix) to a
// request of api_key/api_version; sets the correlation id and the offset
// of the body.
Status parse_response_header(std::span<const uint8_t> frame, int16_t api_key, int16_t api_version,
                             int32_t* correlation_id, size_t* body_offset);

// ---------------------------------------------------------------------------
// Frame building blocks (used by the templates above)
// ---------------------------------------------------------------------------

// A frame being written: where its size prefix is.
struct FrameMark {
  size_t prefix_memory_offset = 0;
  size_t size_before = 0;
};
// Reserves the size prefix.
FrameMark begin_frame(OutputBuffer* out);
// Patches the size prefix; fails when the frame exceeds INT32_MAX bytes.
Status end_frame(const FrameMark& mark, OutputBuffer* out);
void write_response_header(Writer& w, int16_t api_key, int16_t api_version, int32_t correlation_id);
void write_request_header(Writer& w, int16_t api_key, int16_t api_version, int32_t correlation_id,
                          const std::optional<std::string>& client_id);

template <typename M>
Status encode_response_frame(const M& body, int16_t version, int32_t correlation_id, OutputBuffer* out) {
  FrameMark mark = begin_frame(out);
  Writer w(out);
  write_response_header(w, M::kApiKey, version, correlation_id);
  Status s = encode(body, version, out);
  Status e = end_frame(mark, out);
  return s.ok() ? e : s;
}

template <typename M>
Status encode_request_frame(const M& body, int16_t version, int32_t correlation_id,
                            const std::optional<std::string>& client_id, OutputBuffer* out) {
  FrameMark mark = begin_frame(out);
  Writer w(out);
  write_request_header(w, M::kApiKey, version, correlation_id, client_id);
  Status s = encode(body, version, out);
  Status e = end_frame(mark, out);
  return s.ok() ? e : s;
}

}  // namespace eddy::protocol
