#include "tools/chat/jinja_int.h"

#include <cmath>

namespace toyllm::jinja {

std::optional<int64_t> IntAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> IntSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> IntMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> IntNeg(int64_t a) { return IntSub(0, a); }

std::optional<int64_t> IntFloorDiv(int64_t a, int64_t b) {
  if (b == -1) return IntNeg(a);  // INT64_MIN / -1 is the one quotient that overflows
  int64_t q = a / b;
  if (a % b != 0 && (a < 0) != (b < 0)) --q;
  return q;
}

int64_t IntMod(int64_t a, int64_t b) {
  if (b == -1) return 0;  // INT64_MIN % -1 traps on x86
  int64_t r = a % b;
  // C's remainder takes a's sign; where that differs from b's, adding b cannot overflow.
  if (r != 0 && (r < 0) != (b < 0)) r += b;
  return r;
}

std::optional<int64_t> IntPow(int64_t a, int64_t b) {
  int64_t result = 1;
  while (b > 0) {
    if (b & 1) {
      if (__builtin_mul_overflow(result, a, &result)) return std::nullopt;
    }
    b >>= 1;
    // Squared only while bits remain: the result then holds at least this square, so an
    // overflow here means the answer overflows too.
    if (b > 0 && __builtin_mul_overflow(a, a, &a)) return std::nullopt;
  }
  return result;
}

std::optional<int64_t> IntFromDouble(double x) {
  // 2^63 is exact in a double; every double below it in magnitude truncates into range.
  if (!(std::fabs(x) < 9223372036854775808.0)) return std::nullopt;
  return static_cast<int64_t>(x);
}

}  // namespace toyllm::jinja
