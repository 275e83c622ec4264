#include "tests/fake_nccl/reduction.h"

#include <cstdint>
#include <cstring>

#include "collectives/half_float.h"

namespace fake_nccl {
namespace {

// The 16-bit floating types are reduced in float and rounded back, as a GPU kernel would.
float bf16_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
std::uint16_t float_to_bf16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even (NaN payloads are not a test concern)
  return static_cast<std::uint16_t>(bits >> 16);
}

template <class T>
T combine(T a, T b, ncclRedOp_t op) {
  switch (op) {
    case ncclProd: return static_cast<T>(a * b);
    case ncclMax: return a < b ? b : a;
    case ncclMin: return b < a ? b : a;
    default: return static_cast<T>(a + b);  // ncclSum, and ncclAvg before its division
  }
}

// How an element is stored and in which type it is computed.
template <class T>
struct Plain {
  using Storage = T;
  static T load(T v) { return v; }
  static T store(T v) { return v; }
};
struct Half {
  using Storage = std::uint16_t;
  static float load(std::uint16_t h) { return mcrp::half_to_float(h); }
  static std::uint16_t store(float f) { return mcrp::float_to_half(f); }
};
struct BFloat {
  using Storage = std::uint16_t;
  static float load(std::uint16_t b) { return bf16_to_float(b); }
  static std::uint16_t store(float f) { return float_to_bf16(f); }
};

// Calls fn with the element traits of `type`.
template <class Fn>
void on_type(ncclDataType_t type, Fn&& fn) {
  switch (type) {
    case ncclInt8: return fn(Plain<std::int8_t>{});
    case ncclUint8: return fn(Plain<std::uint8_t>{});
    case ncclInt32: return fn(Plain<std::int32_t>{});
    case ncclUint32: return fn(Plain<std::uint32_t>{});
    case ncclInt64: return fn(Plain<std::int64_t>{});
    case ncclUint64: return fn(Plain<std::uint64_t>{});
    case ncclFloat32: return fn(Plain<float>{});
    case ncclFloat64: return fn(Plain<double>{});
    case ncclFloat16: return fn(Half{});
    case ncclBfloat16: return fn(BFloat{});
    default: return;
  }
}

}  // namespace

std::size_t type_size(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64: return 8;
    default: return 0;
  }
}

bool supported(ncclDataType_t type, ncclRedOp_t op) {
  return type_size(type) != 0 && op >= ncclSum && op <= ncclAvg;
}

void reduce_into(void* acc, const void* in, std::size_t count, ncclDataType_t type, ncclRedOp_t op) {
  on_type(type, [&](auto traits) {
    using Traits = decltype(traits);
    auto* a = static_cast<typename Traits::Storage*>(acc);
    const auto* b = static_cast<const typename Traits::Storage*>(in);
    for (std::size_t i = 0; i < count; ++i) a[i] = Traits::store(combine(Traits::load(a[i]), Traits::load(b[i]), op));
  });
}

void divide_for_average(void* acc, std::size_t count, ncclDataType_t type, int n) {
  on_type(type, [&](auto traits) {
    using Traits = decltype(traits);
    auto* a = static_cast<typename Traits::Storage*>(acc);
    for (std::size_t i = 0; i < count; ++i) {
      const auto value = Traits::load(a[i]);
      a[i] = Traits::store(static_cast<decltype(value)>(value / static_cast<decltype(value)>(n)));
    }
  });
}

}  // namespace fake_nccl
