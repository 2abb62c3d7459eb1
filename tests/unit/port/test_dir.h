// A fresh temporary directory for one test, removed with its contents
// afterwards: the one temporary-directory helper of the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <stdlib.h>

#include <cstdlib>
#include <string>

#include "port/port.h"

namespace eddy::testing {

class TempDir {
 public:
  // Under base (default: $TMPDIR, or /tmp).
  explicit TempDir(const char* base = nullptr) {
    if (base == nullptr) base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != 0 ? base : "/tmp") + "/eddy-test-XXXXXX";
    char* made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    path_ = pattern;
  }
  ~TempDir() { port::remove_tree(path_); }
  const std::string& path() const { return path_; }
  // A path inside the directory (nothing is created).
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace eddy::testing
