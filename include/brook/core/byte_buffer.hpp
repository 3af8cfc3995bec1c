// A growable byte array whose growth does not zero-fill: what codecs compress and decompress
// into. A codec sizes its output to the most it may write (a frame bound, a 64 KiB block),
// writes, then shrinks it to what it wrote; with std::vector<std::byte> every such growth
// would first write zeros over bytes the codec overwrites at once (for lz4, about as many
// bytes as it decodes).
//
//   brook::byte_buffer out;
//   out.resize(bound);                  // new bytes are indeterminate, not zero
//   out.resize(written);
//
// A byte_buffer is a std::vector<std::byte> with an allocator that default-initialises:
// resize(n) and the one-argument constructor leave new bytes indeterminate (read only what
// was written); resize(n, value), assign, insert and push_back set bytes as usual.
//
// Thread-safety: a value; as std::vector.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace brook {

/// std::allocator, except that a construct without arguments default-initialises (for a
/// trivial type: leaves the object's bytes as they were) rather than value-initialises.
template <typename T>
class default_init_allocator : public std::allocator<T> {
  using base = std::allocator<T>;

 public:
  template <typename U>
  struct rebind {
    using other = default_init_allocator<U>;
  };
  using base::base;
  default_init_allocator() = default;
  template <typename U>
  default_init_allocator(const default_init_allocator<U>&) noexcept {}

  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    std::allocator_traits<base>::construct(static_cast<base&>(*this), p, std::forward<Args>(args)...);
  }
};

/// Bytes that resize without zero-filling (see above).
using byte_buffer = std::vector<std::byte, default_init_allocator<std::byte>>;

/// b.resize(n), except that a growth past the capacity (to at least twice it) moves the bytes
/// with one memcpy: std::vector moves the elements of an allocator other than std::allocator
/// one at a time, which GCC at -O2 leaves a loop of single bytes. For buffers that grow
/// often, such as a decompressor's output.
inline void resize_uninitialized(byte_buffer& b, std::size_t n) {
  if (n > b.capacity()) {
    byte_buffer bigger;
    bigger.reserve(std::max(n, 2 * b.capacity()));
    bigger.resize(n);  // allocated above: nothing is moved or written
    if (!b.empty()) std::memcpy(bigger.data(), b.data(), b.size());
    b.swap(bigger);
    return;
  }
  b.resize(n);
}

}  // namespace brook
