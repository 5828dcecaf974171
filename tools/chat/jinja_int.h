// Python's integer arithmetic on int64. Python's ints never overflow; a template's do, and
// where the exact result would not fit these return nullopt, which the interpreter turns
// into an error rather than a wrapped number (signed overflow is undefined behaviour in C++).
#ifndef TOYLLM_TOOLS_CHAT_JINJA_INT_H_
#define TOYLLM_TOOLS_CHAT_JINJA_INT_H_

#include <cstdint>
#include <optional>

namespace toyllm::jinja {

std::optional<int64_t> IntAdd(int64_t a, int64_t b);
std::optional<int64_t> IntSub(int64_t a, int64_t b);
std::optional<int64_t> IntMul(int64_t a, int64_t b);
std::optional<int64_t> IntNeg(int64_t a);
// a // b and a % b round toward negative infinity, so a % b takes b's sign; b != 0.
std::optional<int64_t> IntFloorDiv(int64_t a, int64_t b);
int64_t IntMod(int64_t a, int64_t b);
// a ** b for b >= 0.
std::optional<int64_t> IntPow(int64_t a, int64_t b);
// The int a float truncates to, if it is finite and in range.
std::optional<int64_t> IntFromDouble(double x);

}  // namespace toyllm::jinja

#endif  // TOYLLM_TOOLS_CHAT_JINJA_INT_H_
