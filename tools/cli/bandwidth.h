// The machine's read bandwidth, measured the way decoding reads weights: threads streaming
// through a buffer again and again. It bounds decode speed: every generated token reads
// every weight matrix once. Over a buffer as large as those weights it is the bound's
// bandwidth on any cache size (a model that fits in L3 is read from L3); over 1 GiB it is
// DRAM's.
#ifndef TOYLLM_TOOLS_CLI_BANDWIDTH_H_
#define TOYLLM_TOOLS_CLI_BANDWIDTH_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace toyllm {

inline constexpr int64_t kDramProbeBytes = int64_t{1} << 30;

// Read bandwidth in GB/s (10⁹ bytes per second) with `threads` threads, each sweeping its
// share of a buffer of `bytes` (at least a page per thread), the best of a few passes that
// each read at least 256 MiB. The buffer lives in a child process, so that it counts
// neither in this process's peak memory nor against the model's.
absl::StatusOr<double> MeasureReadBandwidth(int threads, int64_t bytes);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_BANDWIDTH_H_
