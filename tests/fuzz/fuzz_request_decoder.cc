// libFuzzer target: arbitrary bytes into the request decoder, for every api
// key and version the codec implements.
//
// The input is first tried as a request frame (without its size prefix):
// header, then body for the api key and version the header names. When that
// header does not parse (most inputs), the first two bytes pick the api and
// the version and the rest is the body. Captured client frames
// (tests/unit/protocol/data/*.bin) are therefore valid seeds as they are.
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

using eddy::protocol::ApiInfo;
using eddy::protocol::ParsedRequestHeader;
using eddy::Status;

namespace {

void check(int16_t api_key, int16_t version, std::span<const uint8_t> body) {
  bool reencode_ok = true;
  Status s = eddy::protocol::testing::decode_any_request(api_key, version, body, &reencode_ok);
  if (!s.ok() && s.message().empty()) {
    std::fprintf(stderr, "decode failed without a message: api %d v%d\n", api_key, version);
    std::abort();
  }
  if (!reencode_ok) {
    std::fprintf(stderr, "decoded request does not survive a re-encode: api %d v%d\n", api_key, version);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> input(data, size);

  ParsedRequestHeader header;
  if (eddy::protocol::parse_request_header(input, &header).ok()) {
    const int16_t key = header.header.request_api_key;
    const int16_t version = header.header.request_api_version;
    if (eddy::protocol::is_supported(key, version)) check(key, version, input.subspan(header.body_offset));
    return 0;
  }

  if (size < 2) return 0;
  std::span<const ApiInfo> apis = eddy::protocol::codec_apis();
  const ApiInfo& api = apis[data[0] % apis.size()];
  const int range = api.max_version - api.min_version + 1;
  const int16_t version = static_cast<int16_t>(api.min_version + data[1] % range);
  check(api.api_key, version, input.subspan(2));
  return 0;
}
