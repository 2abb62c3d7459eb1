#include <gtest/gtest.h>

#include <string>

#include "net/http_request_head.h"

namespace eddy::net {
namespace {

TEST(HttpRequestHead, FindsTheEndOfTheHead) {
  EXPECT_EQ(find_request_head_end("GET / HTTP/1.1\r\nHost: x\r\n"), 0u);
  EXPECT_EQ(find_request_head_end("GET / HTTP/1.1\r\nHost: x\r\n\r\nbody"), 27u);
  EXPECT_EQ(find_request_head_end("GET / HTTP/1.0\n\n"), 16u);
  EXPECT_EQ(find_request_head_end(""), 0u);
}

int parse(const std::string& head, HttpRequest* r = nullptr) {
  HttpRequest ignored;
  return parse_request_head(head, r != nullptr ? r : &ignored);
}

TEST(HttpRequestHead, GetWithQuery) {
  HttpRequest r;
  ASSERT_EQ(parse("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n", &r), 0);
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.path, "/metrics");
  EXPECT_EQ(r.query, "x=1");
  ASSERT_EQ(parse("HEAD / HTTP/1.0\r\n\r\n", &r), 0);
  EXPECT_EQ(r.method, "HEAD");
  EXPECT_EQ(r.path, "/");
}

TEST(HttpRequestHead, Refusals) {
  EXPECT_EQ(parse("POST /metrics HTTP/1.1\r\n\r\n"), 405);
  EXPECT_EQ(parse("DELETE / HTTP/1.1\r\n\r\n"), 405);
  EXPECT_EQ(parse("GET /metrics HTTP/2.0\r\n\r\n"), 505);
  EXPECT_EQ(parse("GET http://x/metrics HTTP/1.1\r\n\r\n"), 400);  // absolute form: not served
  EXPECT_EQ(parse("GET  / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(parse("GET /\x01 HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(parse("G\"T / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(parse("GET / HTTP/1.1 extra\r\n\r\n"), 400);
  EXPECT_EQ(parse("GET / HTTX/1.1\r\n\r\n"), 400);
  EXPECT_EQ(parse(std::string("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 27)), 400);
  EXPECT_EQ(parse("\x16\x03\x01\x02\x00\r\n\r\n"), 400);
  EXPECT_EQ(parse("\r\n\r\n"), 400);
}

}  // namespace
}  // namespace eddy::net
