#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "port/port.h"
#include "test_dir.h"

namespace eddy::port {
namespace {

using eddy::testing::TempDir;

TEST(File, OpenModes) {
  TempDir dir;
  File f;
  EXPECT_TRUE(File::open(dir.file("missing"), OpenMode::kReadOnly, &f));
  EXPECT_FALSE(File::open(dir.file("a"), OpenMode::kCreateExclusive, &f));
  EXPECT_TRUE(f.valid());
  File g;
  auto ec = File::open(dir.file("a"), OpenMode::kCreateExclusive, &g);
  EXPECT_EQ(ec, std::errc::file_exists);
  EXPECT_FALSE(File::open(dir.file("a"), OpenMode::kReadWrite, &g));
}

TEST(File, WriteReadAtOffsets) {
  TempDir dir;
  File f;
  ASSERT_FALSE(File::open(dir.file("a"), OpenMode::kCreate, &f));
  ASSERT_FALSE(f.write_at(100, "hello", 5));
  char buf[16] = {};
  size_t got = 0;
  ASSERT_FALSE(f.read_at(100, buf, 5, &got));
  EXPECT_EQ(got, 5u);
  EXPECT_EQ(std::string(buf, 5), "hello");
  ASSERT_FALSE(f.read_at(103, buf, 10, &got));  // short at end of file
  EXPECT_EQ(got, 2u);
  uint64_t size = 0;
  ASSERT_FALSE(f.size(&size));
  EXPECT_EQ(size, 105u);
  ASSERT_FALSE(f.sync_data());
  ASSERT_FALSE(f.truncate(50));
  ASSERT_FALSE(f.size(&size));
  EXPECT_EQ(size, 50u);
}

void expect_zeros(const File& f, uint64_t offset, size_t length) {
  std::vector<char> buf(length, 'x');
  size_t got = 0;
  ASSERT_FALSE(f.read_at(offset, buf.data(), length, &got));
  ASSERT_EQ(got, length);
  EXPECT_TRUE(std::all_of(buf.begin(), buf.end(), [](char c) { return c == 0; }));
}

TEST(File, PreallocateReservesZeroedSpace) {
  TempDir dir;
  File f;
  ASSERT_FALSE(File::open(dir.file("seg"), OpenMode::kCreate, &f));
  ASSERT_FALSE(f.preallocate(0, 1 << 20));
  uint64_t size = 0;
  ASSERT_FALSE(f.size(&size));
  EXPECT_EQ(size, 1u << 20);
  expect_zeros(f, 0, 1 << 20);
}

TEST(File, PortablePreallocateFallback) {
  TempDir dir;
  File f;
  ASSERT_FALSE(File::open(dir.file("seg"), OpenMode::kCreate, &f));
  ASSERT_FALSE(preallocate_by_writing(f.fd(), 0, 200000));
  uint64_t size = 0;
  ASSERT_FALSE(f.size(&size));
  EXPECT_EQ(size, 200000u);
  expect_zeros(f, 0, 200000);
}

TEST(File, ExclusiveLockIsRefusedToASecondHolder) {
  TempDir dir;
  File a, b;
  ASSERT_FALSE(File::open(dir.file(".lock"), OpenMode::kCreate, &a));
  ASSERT_FALSE(File::open(dir.file(".lock"), OpenMode::kCreate, &b));
  ASSERT_FALSE(a.try_lock_exclusive());
  EXPECT_TRUE(b.try_lock_exclusive());  // flock locks are per open file description
  a.close();
  EXPECT_FALSE(b.try_lock_exclusive());
}

TEST(Directories, MakeListRenameRemove) {
  TempDir dir;
  std::string nested = dir.file("a/b/c");
  ASSERT_FALSE(make_directories(nested));
  ASSERT_FALSE(make_directories(nested));  // idempotent
  EXPECT_TRUE(is_directory(nested));
  File f;
  ASSERT_FALSE(File::open(nested + "/x", OpenMode::kCreate, &f));
  f.close();
  ASSERT_FALSE(rename_file(nested + "/x", nested + "/y"));
  ASSERT_FALSE(sync_directory(nested));
  std::vector<std::string> names;
  ASSERT_FALSE(list_directory(nested, &names));
  EXPECT_EQ(names, std::vector<std::string>{"y"});
  EXPECT_TRUE(path_exists(nested + "/y"));
  EXPECT_FALSE(path_exists(nested + "/x"));
  ASSERT_FALSE(remove_tree(dir.file("a")));
  EXPECT_FALSE(path_exists(dir.file("a")));
  EXPECT_FALSE(remove_tree(dir.file("a")));  // missing is fine
  EXPECT_TRUE(list_directory(dir.file("nope"), &names));
}

TEST(Directories, AllocatedBytesCountPreallocatedFilesUnderATree) {
  TempDir dir;
  ASSERT_FALSE(make_directories(dir.file("a/b")));
  uint64_t empty = 0;
  ASSERT_FALSE(allocated_bytes(dir.file("a"), &empty));
  File f;
  ASSERT_FALSE(File::open(dir.file("a/b/seg"), OpenMode::kCreate, &f));
  ASSERT_FALSE(f.preallocate(0, 1 << 20));
  f.close();
  uint64_t with_file = 0;
  ASSERT_FALSE(allocated_bytes(dir.file("a"), &with_file));
  EXPECT_GE(with_file, empty + (1u << 20));
  EXPECT_LT(with_file, empty + (1u << 20) + (64u << 10));
  uint64_t file_only = 0;
  ASSERT_FALSE(allocated_bytes(dir.file("a/b/seg"), &file_only));
  EXPECT_GE(file_only, 1u << 20);
  EXPECT_TRUE(allocated_bytes(dir.file("missing"), &file_only));
}

TEST(Directories, FilesystemSpaceIsMeasured) {
  TempDir dir;
  FilesystemSpace space;
  ASSERT_FALSE(filesystem_space(dir.path(), &space));
  EXPECT_GT(space.total_bytes, 0u);
  EXPECT_LE(space.available_bytes, space.total_bytes);
  EXPECT_TRUE(filesystem_space(dir.file("missing"), &space));
}

}  // namespace
}  // namespace eddy::port
