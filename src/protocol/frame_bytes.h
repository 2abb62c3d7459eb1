// The bytes of one request frame as they arrive from a socket (the body,
// without the size prefix). A vector whose resize leaves new bytes
// uninitialised (zeroing a frame only to overwrite it from the socket at
// once cost a memset of every produced byte), and whose large buffers are
// recycled (frame_memory.h: a fresh buffer per frame cost a page fault and
// a kernel zeroing of every page).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "protocol/frame_memory.h"

namespace eddy::protocol {

// std::allocator, except that value-initialisation (resize, the count
// constructor) default-initialises (no zeroing for trivial types), and
// that memory comes from frame_memory (large blocks are reused).
template <class T>
class DefaultInitAllocator : public std::allocator<T> {
 public:
  using value_type = T;
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() noexcept = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    if (n > std::numeric_limits<size_t>::max() / sizeof(T)) throw std::bad_alloc();
    static_assert(alignof(T) <= alignof(std::max_align_t));
    return static_cast<T*>(frame_memory::allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { frame_memory::deallocate(p, n * sizeof(T)); }

  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using FrameBytes = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

}  // namespace eddy::protocol
