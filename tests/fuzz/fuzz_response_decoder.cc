// libFuzzer target: arbitrary bytes into the response decoder (what Eddy's
// own client reads from a central Kafka cluster), for every api key and
// version the codec implements. The first two bytes pick the api and the
// version; the rest is a response frame without its size prefix (response
// header, then body).
//
// Besides crashes and sanitizer reports, a finding is a body that decodes but
// does not survive encode -> decode unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "generated/test_messages.h"
#include "protocol/headers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  std::span<const eddy::protocol::ApiInfo> apis = eddy::protocol::codec_apis();
  const eddy::protocol::ApiInfo& api = apis[data[0] % apis.size()];
  const int range = api.max_version - api.min_version + 1;
  const int16_t version = static_cast<int16_t>(api.min_version + data[1] % range);
  std::span<const uint8_t> frame(data + 2, size - 2);

  int32_t correlation_id = 0;
  size_t body_offset = 0;
  if (!eddy::protocol::parse_response_header(frame, api.api_key, version, &correlation_id, &body_offset).ok()) {
    return 0;
  }
  bool reencode_ok = true;
  eddy::Status s =
      eddy::protocol::testing::decode_any_response(api.api_key, version, frame.subspan(body_offset), &reencode_ok);
  if (!s.ok() && s.message().empty()) {
    std::fprintf(stderr, "decode failed without a message: api %d v%d\n", api.api_key, version);
    std::abort();
  }
  if (!reencode_ok) {
    std::fprintf(stderr, "decoded response does not survive a re-encode: api %d v%d\n", api.api_key, version);
    std::abort();
  }
  return 0;
}
