// The bytes of one request frame as they arrive from a socket (the body,
// without the size prefix). A vector whose resize leaves new bytes
// uninitialised: a large frame grows as its bytes arrive (never to its
// claimed size up front), and zeroing each step only to overwrite it from
// the socket at once cost a memset of every produced byte.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace eddy::protocol {

// std::allocator, except that value-initialisation (resize, the count
// constructor) default-initialises: no zeroing for trivial types.
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
