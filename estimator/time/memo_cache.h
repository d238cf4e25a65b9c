// A fixed-size, direct-mapped memo table: one slot per hash bucket, the newest entry wins.
// Storage is allocated once when the table is built, so lookups and inserts never allocate.
// Not thread-safe: a table belongs to one StepTimeModel used from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace dsplan {

// Mixes one more small integer (or the bits of a double) into a hash: cheap, and weak in
// its low bits, so MemoCache finishes the hash before it picks a slot.
inline std::uint64_t hash_mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

// splitmix64's finaliser: every input bit reaches every output bit.
inline std::uint64_t hash_finish(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

template <class Key, class Value, std::size_t N>
class MemoCache {
  static_assert((N & (N - 1)) == 0, "N must be a power of two");

 public:
  MemoCache() : slots_(std::make_unique<Slot[]>(N)) {}

  // The cached value for `key`, computing and storing it with `make()` on a miss.
  template <class Make>
  const Value& get(const Key& key, std::uint64_t hash, Make&& make) {
    Slot& s = slots_[hash_finish(hash) & (N - 1)];
    if (!s.used || !(s.key == key)) {
      s.value = make();
      s.key = key;
      s.used = true;
      ++misses_;
    }
    return s.value;
  }
  std::uint64_t misses() const { return misses_; }

 private:
  struct Slot {
    Key key{};
    Value value{};
    bool used = false;
  };
  std::unique_ptr<Slot[]> slots_;
  std::uint64_t misses_ = 0;
};

}  // namespace dsplan
