// The machine's memory read bandwidth, measured the way decoding reads weights: threads
// streaming through a buffer far larger than any cache. It bounds decode speed: every
// generated token reads every weight matrix once.
#ifndef TOYLLM_TOOLS_CLI_BANDWIDTH_H_
#define TOYLLM_TOOLS_CLI_BANDWIDTH_H_

#include "absl/status/statusor.h"

namespace toyllm {

// Read bandwidth in GB/s (10⁹ bytes per second) with `threads` threads, the best of a few
// passes over 1 GiB. The buffer lives in a child process, so that it counts neither in
// this process's peak memory nor against the model's.
absl::StatusOr<double> MeasureReadBandwidth(int threads);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_BANDWIDTH_H_
