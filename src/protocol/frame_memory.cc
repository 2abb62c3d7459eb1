#include "protocol/frame_memory.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <new>
#include <vector>

#include "port/mutex.h"
#include "port/thread_annotations.h"

// Under AddressSanitizer a cached block is poisoned: a use of a frame after
// it was freed is still reported, as it would be without the cache.
#if defined(__SANITIZE_ADDRESS__)
#define EDDY_FRAME_MEMORY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EDDY_FRAME_MEMORY_ASAN 1
#endif
#endif
#ifdef EDDY_FRAME_MEMORY_ASAN
#include <sanitizer/asan_interface.h>
#define EDDY_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define EDDY_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define EDDY_POISON(p, n) ((void)(p), (void)(n))
#define EDDY_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace eddy::protocol::frame_memory {
namespace {

// In front of every large block: its capacity. 16 bytes keep the block
// aligned as malloc aligns.
constexpr size_t kHeaderBytes = 16;
static_assert(kHeaderBytes >= sizeof(size_t) && kHeaderBytes % alignof(std::max_align_t) == 0);

struct Block {
  void* base;  // what malloc returned
  size_t capacity;
};

class Cache {
 public:
  ~Cache() { release(); }

  // A cached block of capacity in [bytes, 2 * bytes], the smallest, and of
  // those the one freed last (its bytes are the likeliest still in the CPU
  // cache); nullptr when there is none.
  void* take(size_t bytes) EXCLUDES(mu_) {
    port::MutexLock lock(mu_);
    auto best = blocks_.end();
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      if (it->capacity < bytes || it->capacity / 2 > bytes) continue;
      if (best == blocks_.end() || it->capacity <= best->capacity) best = it;
    }
    if (best == blocks_.end()) {
      ++fresh_;
      return nullptr;
    }
    void* base = best->base;
    EDDY_UNPOISON(static_cast<char*>(base) + kHeaderBytes, best->capacity);
    cached_bytes_ -= best->capacity;
    blocks_.erase(best);
    ++reused_;
    return base;
  }

  // Keeps the block when it fits, or when cached blocks smaller than it can
  // make room (the smallest go first); false, the cache unchanged: the
  // caller frees it.
  bool keep(void* base, size_t capacity) EXCLUDES(mu_) {
    if (capacity > kCacheLimitBytes) return false;
    std::vector<void*> evicted;
    {
      port::MutexLock lock(mu_);
      if (cached_bytes_ + capacity > kCacheLimitBytes) {
        uint64_t smaller = 0;
        for (const Block& b : blocks_) {
          if (b.capacity < capacity) smaller += b.capacity;
        }
        if (cached_bytes_ - smaller + capacity > kCacheLimitBytes) return false;
      }
      while (cached_bytes_ + capacity > kCacheLimitBytes) {
        auto smallest = std::min_element(blocks_.begin(), blocks_.end(),
                                         [](const Block& a, const Block& b) { return a.capacity < b.capacity; });
        EDDY_UNPOISON(static_cast<char*>(smallest->base) + kHeaderBytes, smallest->capacity);
        evicted.push_back(smallest->base);
        cached_bytes_ -= smallest->capacity;
        blocks_.erase(smallest);
      }
      EDDY_POISON(static_cast<char*>(base) + kHeaderBytes, capacity);
      blocks_.push_back(Block{base, capacity});
      cached_bytes_ += capacity;
    }
    for (void* p : evicted) std::free(p);
    return true;
  }

  void release() EXCLUDES(mu_) {
    std::vector<Block> blocks;
    {
      port::MutexLock lock(mu_);
      blocks.swap(blocks_);
      cached_bytes_ = 0;
    }
    for (const Block& b : blocks) EDDY_UNPOISON(static_cast<char*>(b.base) + kHeaderBytes, b.capacity);
    for (const Block& b : blocks) std::free(b.base);
  }

  Stats stats() EXCLUDES(mu_) {
    port::MutexLock lock(mu_);
    return Stats{cached_bytes_, blocks_.size(), reused_, fresh_};
  }

 private:
  port::Mutex mu_;
  // At most kCacheLimitBytes / kGranuleBytes blocks: a linear scan.
  std::vector<Block> blocks_ GUARDED_BY(mu_);
  uint64_t cached_bytes_ GUARDED_BY(mu_) = 0;
  uint64_t reused_ GUARDED_BY(mu_) = 0;
  uint64_t fresh_ GUARDED_BY(mu_) = 0;
};

// Never destroyed: frames may be freed by static destructors after this
// file's would have run.
Cache& cache() {
  static Cache* c = new Cache();
  return *c;
}

size_t capacity_for(size_t bytes) {
  if (bytes > std::numeric_limits<size_t>::max() - kGranuleBytes - kHeaderBytes) throw std::bad_alloc();
  return (bytes + kGranuleBytes - 1) / kGranuleBytes * kGranuleBytes;
}

}  // namespace

void* allocate(size_t bytes) {
  if (bytes < kCachedMinBytes) return ::operator new(bytes);
  const size_t capacity = capacity_for(bytes);
  void* base = cache().take(bytes);
  if (base == nullptr) {
    base = std::malloc(kHeaderBytes + capacity);
    if (base == nullptr) throw std::bad_alloc();
    *static_cast<size_t*>(base) = capacity;
  }
  return static_cast<char*>(base) + kHeaderBytes;
}

void deallocate(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < kCachedMinBytes) {
    ::operator delete(p);
    return;
  }
  void* base = static_cast<char*>(p) - kHeaderBytes;
  const size_t capacity = *static_cast<size_t*>(base);
  if (!cache().keep(base, capacity)) std::free(base);
}

void release_cached() noexcept { cache().release(); }

Stats stats() noexcept { return cache().stats(); }

}  // namespace eddy::protocol::frame_memory
