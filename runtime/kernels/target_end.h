// Closes a target_*_begin.h at the end of a kernel file (gcc's
// target pragma ends with the file by itself; clang's attribute needs the pop).
#if defined(__clang__)
#pragma clang attribute pop
#endif
