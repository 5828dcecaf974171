// Reading a GEMV's rows as several far-apart streams at once. Decode reads every weight
// once per token, and one core working through a single run of rows, with a kernel's work
// on each cache line between its loads, draws less from memory than a plain read does even
// with software prefetch: on an Intel Xeon (Emerald Rapids) Q8_0 rows came at 12.7 GB/s
// where a read loop draws 16. The processor's prefetchers keep more lines in flight for
// several sequential streams than for one: with a thread's rows read as four quarters in
// step (row i of each together), the same kernel drew 15.3 GB/s, and reads each activation
// once for four rows.
#ifndef TOYLLM_RUNTIME_KERNELS_ROW_STREAMS_H_
#define TOYLLM_RUNTIME_KERNELS_ROW_STREAMS_H_

#include <cstdint>
#include <type_traits>

#include "runtime/weights.h"

namespace toyllm {

// Rows first, first + step, …, first + (kStreams − 1)·step of w: their data and where their
// results go.
struct RowsInStep {
  const uint8_t* data;  // row `first`
  int64_t bytes_apart;  // from one of the rows to the next
  float* y;             // y[first]
  int step;
};

// Calls dot(streams, rows) over [row_begin, row_end) split into kStreams quarters read in
// step, then once for each row the split leaves over; streams is a std::integral_constant,
// so that the kernel's count of rows is a constant: dot(std::integral_constant<int, 4>(),
// rows) for four at once, and with 1 for one.
template <int kStreams, class Dot>
void InStreams(const Matrix& w, int row_begin, int row_end, float* y, Dot dot) {
  const int quarter = (row_end - row_begin) / kStreams;
  const auto rows = [&](int first, int step) {
    return RowsInStep{static_cast<const uint8_t*>(w.row(first)), step * w.row_stride(), y + first, step};
  };
  for (int i = 0; i < quarter; ++i) dot(std::integral_constant<int, kStreams>(), rows(row_begin + i, quarter));
  for (int r = row_begin + kStreams * quarter; r < row_end; ++r) dot(std::integral_constant<int, 1>(), rows(r, 1));
}

}  // namespace toyllm

#endif  // TOYLLM_RUNTIME_KERNELS_ROW_STREAMS_H_
