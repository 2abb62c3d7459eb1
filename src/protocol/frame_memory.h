// Where the buffers of large request frames come from: a small cache of
// freed blocks, so that a steady stream of large produce requests reuses
// the same resident pages instead of taking fresh ones from the system for
// every frame.
//
// Why: glibc serves a block of a megabyte with a fresh mmap (or from heap
// top it trims back on free), so each 1 MB produce request cost a page
// fault and a kernel zeroing of every page it received, and an munmap
// after: measured, 28 % of the broker's CPU and half its throughput for
// 1 KiB messages from librdkafka (tests/bench/results/write_path.md).
//
// Blocks of at least kCachedMinBytes carry a 16-byte header with their
// capacity (a multiple of kGranuleBytes, so that frames of nearly the same
// size share blocks); smaller ones are plain operator new. A freed large
// block is kept while the cache holds at most kCacheLimitBytes (the
// smallest blocks give way to a larger one); the rest go back to the
// system. A block is handed out only for a request of at least half its
// capacity, so a small frame never holds a large block.
//
// Invariant: cached_bytes() <= kCacheLimitBytes.
// Threading: any thread (one mutex, taken once per large block).
#pragma once

#include <cstddef>
#include <cstdint>

namespace eddy::protocol::frame_memory {

inline constexpr size_t kCachedMinBytes = size_t{64} << 10;
inline constexpr size_t kGranuleBytes = size_t{64} << 10;
inline constexpr size_t kCacheLimitBytes = size_t{4} << 20;

// At least bytes, aligned for any type; throws std::bad_alloc.
void* allocate(size_t bytes);
// p from allocate(bytes), with the same bytes.
void deallocate(void* p, size_t bytes) noexcept;

// Frees every cached block (after a spike, with port::release_free_memory).
void release_cached() noexcept;

struct Stats {
  uint64_t cached_bytes = 0;
  uint64_t cached_blocks = 0;
  uint64_t reused = 0;      // large allocations served from the cache
  uint64_t fresh = 0;       // large allocations the system served
};
Stats stats() noexcept;

}  // namespace eddy::protocol::frame_memory
