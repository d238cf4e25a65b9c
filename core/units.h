// Physical quantities used across dsplan: bytes, seconds, FLOPs and their rates.
// A Quantity<Tag> wraps a double in SI base units (bytes, seconds, FLOPs) so that a
// byte count can never be added to a time by accident. Conversions from the units
// people write (GiB, GB/s, TFLOP/s, us) happen only through the named helpers below,
// which parsers call; model code works in base units throughout.
#pragma once

#include <cmath>
#include <compare>

namespace dsplan {

template <class Tag>
struct Quantity {
  double v = 0.0;
  constexpr Quantity() = default;
  constexpr explicit Quantity(double x) : v(x) {}
  constexpr Quantity& operator+=(Quantity o) { v += o.v; return *this; }
  constexpr Quantity& operator-=(Quantity o) { v -= o.v; return *this; }
  constexpr Quantity& operator*=(double k) { v *= k; return *this; }
  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.v + b.v); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.v - b.v); }
  friend constexpr Quantity operator*(Quantity a, double k) { return Quantity(a.v * k); }
  friend constexpr Quantity operator*(double k, Quantity a) { return Quantity(a.v * k); }
  friend constexpr Quantity operator/(Quantity a, double k) { return Quantity(a.v / k); }
  friend constexpr double operator/(Quantity a, Quantity b) { return a.v / b.v; }
  friend constexpr auto operator<=>(Quantity a, Quantity b) = default;
};

using Bytes = Quantity<struct BytesTag>;
using Seconds = Quantity<struct SecondsTag>;
using Flops = Quantity<struct FlopsTag>;
using BytesPerSecond = Quantity<struct BytesPerSecondTag>;
using FlopsPerSecond = Quantity<struct FlopsPerSecondTag>;

constexpr Seconds operator/(Bytes b, BytesPerSecond r) { return Seconds(b.v / r.v); }
constexpr Seconds operator/(Flops f, FlopsPerSecond r) { return Seconds(f.v / r.v); }
constexpr Bytes operator*(BytesPerSecond r, Seconds t) { return Bytes(r.v * t.v); }
constexpr Flops operator*(FlopsPerSecond r, Seconds t) { return Flops(r.v * t.v); }
constexpr Seconds max(Seconds a, Seconds b) { return a.v >= b.v ? a : b; }
constexpr Seconds min(Seconds a, Seconds b) { return a.v <= b.v ? a : b; }
constexpr Bytes max(Bytes a, Bytes b) { return a.v >= b.v ? a : b; }

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Named constructors: the only places unit factors appear.
constexpr Bytes bytes(double x) { return Bytes(x); }
constexpr Bytes KiB(double x) { return Bytes(x * kKiB); }
constexpr Bytes MiB(double x) { return Bytes(x * kMiB); }
constexpr Bytes GiB(double x) { return Bytes(x * kGiB); }
constexpr Bytes MB(double x) { return Bytes(x * 1e6); }
constexpr Bytes GB(double x) { return Bytes(x * 1e9); }
constexpr Seconds seconds(double x) { return Seconds(x); }
constexpr Seconds ms(double x) { return Seconds(x * 1e-3); }
constexpr Seconds us(double x) { return Seconds(x * 1e-6); }
constexpr BytesPerSecond GBps(double x) { return BytesPerSecond(x * 1e9); }
constexpr BytesPerSecond Gbitps(double x) { return BytesPerSecond(x * 1e9 / 8.0); }
constexpr FlopsPerSecond TFLOPS(double x) { return FlopsPerSecond(x * 1e12); }
constexpr Flops flops(double x) { return Flops(x); }

// Read-outs in the units people report.
constexpr double in_GiB(Bytes b) { return b.v / kGiB; }
constexpr double in_MiB(Bytes b) { return b.v / kMiB; }
constexpr double in_GBps(BytesPerSecond r) { return r.v / 1e9; }
constexpr double in_TFLOPS(FlopsPerSecond r) { return r.v / 1e12; }
constexpr double in_ms(Seconds s) { return s.v * 1e3; }
constexpr double in_us(Seconds s) { return s.v * 1e6; }

}  // namespace dsplan
