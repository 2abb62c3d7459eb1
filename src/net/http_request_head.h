// Parsing the head of an HTTP/1.x request for the metrics listener
// (http_server.h): the request line and the end of the header block. Plain
// C++ (no Asio), bounds-checked, never allocates more than the method, path
// and query it returns.
#pragma once

#include <cstddef>
#include <string_view>

#include "net/http_server.h"

namespace eddy::net {

// Where the request head in bytes ends: the offset just after the first
// empty line ("\r\n\r\n", or a bare "\n\n" as RFC 9112 lets servers accept),
// or 0 when bytes holds no complete head yet.
size_t find_request_head_end(std::string_view bytes);

// Parses a complete head (as delimited by find_request_head_end). Returns
// 0 with *out filled for a GET or HEAD of an origin-form target
// ("/path?query"); otherwise the status to answer: 400 (malformed request
// line, control characters, a target not starting with '/'), 405 (another
// method), 505 (not HTTP/1.x).
int parse_request_head(std::string_view head, HttpRequest* out);

}  // namespace eddy::net
