#include "runtime/ops.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/cpu_features.h"
#include "runtime/kernels/dequantize.h"
#include "runtime/kernels/few_rows.h"
#include "runtime/kernels/gemm_bf16.h"
#include "runtime/kernels/gemv.h"
#include "runtime/kernels/quantize_activations.h"
#include "runtime/kernels/softmax.h"
#include "runtime/kernels/swiglu.h"
#include "runtime/thread_pool.h"

namespace toyllm {
namespace {

// Multiply-adds worth handing to another thread: a hand-off costs about a microsecond,
// as much as ~30k multiply-adds of a GEMV. So stories260K's matrices (512×64 at most) stay
// on one thread, and it decodes as fast with -t 2 as with -t 1 (with OpenBLAS's threads
// -t 2 was twice as slow); the 15M shape's (288×288 and up) are split.
constexpr int64_t kMinWorkPerTask = 32 * 1024;

// Tasks per thread: one. Tasks are claimed by whichever thread is free, so a thread that
// another process keeps off its core leaves its task to the others unless it claimed it
// already; and every further task costs a claim on a shared cache line and a shorter run
// for the prefetcher (110M Q8_0 decode at 2 threads: 339 tok/s with 4 per thread, 412
// with 1; with a busy loop on one core, 203 and 230).
constexpr int kTasksPerThread = 1;

// Rows of a quantized or bf16 weight matrix dequantised at once for the bf16 GEMM: ~1 MiB
// of float32 per thread, small enough that the weights are never expanded whole. The batch
// is packed once per product, so a tile's size does not matter to its speed beyond that.
constexpr int64_t kBf16TileFloats = 256 * 1024;

// sgemm packs its batch operand (n × columns) again on every call, so each call must bring
// enough weight rows to pay for that: with tiles of 1 MiB, the 32 rows of an 8192-wide
// matrix, f16 prefill of llama3.2-1b's w2 ran at 109 GFLOP/s on one Zen 5 core; with 512
// rows at 170, as fast as its 2048-wide matrices. A tile is 512 rows × at most 2048
// columns (4 MiB of float32 per thread), wider rows summed chunk by chunk through sgemm's
// beta; 2048 is whole blocks of every block type.
constexpr int kSgemmTileRows = 512;
constexpr int kSgemmTileCols = 2048;

std::unique_ptr<ThreadPool>& Pool() {
  static std::unique_ptr<ThreadPool> pool = std::make_unique<ThreadPool>(1);
  return pool;
}

// Calls body(begin, end) on disjoint slices of [0, rows) covering all of it, as many as
// `work` multiply-adds pay for, on the pool's threads. Slices start on multiples of 16 rows
// so two threads never write the same cache line of a GEMV's output.
template <class Body>
void ForRowSlices(int rows, int64_t work, const Body& body) {
  ThreadPool& pool = *Pool();
  const int max_tasks = pool.size() == 1 ? 1 : kTasksPerThread * pool.size();
  const int groups = (rows + 15) / 16;
  const int tasks = static_cast<int>(
      std::clamp<int64_t>(work / kMinWorkPerTask, 1, std::min(max_tasks, groups)));
  if (tasks == 1) {
    body(0, rows);
    return;
  }
  pool.Run(tasks, [&](int i) {
    const int begin = std::min(rows, groups * i / tasks * 16);
    const int end = std::min(rows, groups * (i + 1) / tasks * 16);
    body(begin, end);
  });
}

// Rows [r, r + rows) of w as float32, one after another in out.
void DequantizeRows(const Matrix& w, int r, int rows, float* out) {
  if (w.packed()) {
    Dequantize(w.type, w.row(r), int64_t{rows} * w.cols, out);
    return;
  }
  for (int i = 0; i < rows; ++i) Dequantize(w.type, w.row(r + i), w.cols, out + int64_t{i} * w.cols);
}

// y[n, rows begin..end) = x[n, cols] · W[begin..end)ᵀ (+ y · beta) by sgemm, W decoded to
// float32 a tile at a time into a per-thread scratch buffer (float32 weights are used as
// they are).
void SgemmRows(const float* x, int n, const Matrix& w, int begin, int end, float* y, float beta) {
  if (w.type == WeightType::kF32) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, end - begin, w.cols, 1.0f, x,
                w.cols, static_cast<const float*>(w.row(begin)), w.row_stride() / 4, beta,
                y + begin, w.rows);
    return;
  }
  const int tile_cols = std::min(w.cols, kSgemmTileCols);
  thread_local std::vector<float> tile;
  tile.resize(static_cast<size_t>(kSgemmTileRows) * tile_cols);
  for (int r = begin; r < end; r += kSgemmTileRows) {
    const int rows = std::min(kSgemmTileRows, end - r);
    for (int c = 0; c < w.cols; c += tile_cols) {
      const int cols = std::min(tile_cols, w.cols - c);
      for (int i = 0; i < rows; ++i) {
        Dequantize(w.type, static_cast<const char*>(w.row(r + i)) + WeightBytes(w.type, c), cols,
                   tile.data() + static_cast<size_t>(i) * cols);
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, rows, cols, 1.0f, x + c, w.cols,
                  tile.data(), cols, c == 0 ? beta : 1.0f, y + r, w.rows);
    }
  }
}

// The same product with x in bf16 `panels`, by the bf16 kernel: other types a tile of rows
// at a time dequantised and rounded to bf16 pairs; bf16 weights are its pairs as stored,
// where they are aligned to whole pairs (GGUF's alignment may be as little as 2) and packed.
void Bf16GemmRows(const Bf16Panels& panels, const Matrix& w, int begin, int end, float* y, bool add) {
  if (w.type == WeightType::kBF16 && reinterpret_cast<uintptr_t>(w.data) % 4 == 0 && w.packed()) {
    GemmBf16(panels, static_cast<const uint32_t*>(w.row(begin)), end - begin, y + begin, w.rows, add);
    return;
  }
  const int tile_rows = static_cast<int>(std::max<int64_t>(16, kBf16TileFloats / w.cols));
  thread_local std::vector<float> tile;
  thread_local std::vector<uint32_t> pairs;
  tile.resize(static_cast<size_t>(tile_rows) * w.cols);
  pairs.resize(tile.size() / 2);
  for (int r = begin; r < end; r += tile_rows) {
    const int rows = std::min(tile_rows, end - r);
    DequantizeRows(w, r, rows, tile.data());
    RoundToBf16Pairs(tile.data(), int64_t{rows} * w.cols, pairs.data());
    GemmBf16(panels, pairs.data(), rows, y + r, w.rows, add);
  }
}

// Rows [begin, end) of one row's product, summed into y where the layer adds.
void GemvRows(const LinearLayer& layer, const GemvInput& x, int begin, int end) {
  if (!layer.add) {
    Gemv(layer.w, x, begin, end, layer.y);
    return;
  }
  thread_local std::vector<float> product;
  product.resize(end);
  Gemv(layer.w, x, begin, end, product.data());
  for (int r = begin; r < end; ++r) layer.y[r] += product[r];
}

}  // namespace

bool BatchRoundsToBf16(const Matrix& w) {
  return PrefillUsesBf16() && (IsBlockQuantized(w.type) || w.type == WeightType::kBF16) && w.cols % 2 == 0;
}

void SetThreadCount(int n) {
  openblas_set_num_threads(1);  // the pool parallelises; BLAS runs inside its slices
  n = std::max(1, n);
  if (Pool()->size() != n) Pool() = std::make_unique<ThreadPool>(n);
}

void ParallelFor(int n, int64_t work, const std::function<void(int)>& body) {
  if (work < 2 * kMinWorkPerTask) {
    for (int i = 0; i < n; ++i) body(i);
    return;
  }
  Pool()->Run(n, body);
}

void Linear(const float* x, int n, std::initializer_list<LinearLayer> layers) {
  int rows = 0;
  bool blocks32 = false, blocks256 = false;  // which quantized activations the types need
  bool bf16 = false;
  for (const LinearLayer& layer : layers) {
    rows += layer.w.rows;
    bf16 = bf16 || BatchRoundsToBf16(layer.w);
    blocks32 = blocks32 || (IsBlockQuantized(layer.w.type) && !IsKQuant(layer.w.type));
    blocks256 = blocks256 || IsKQuant(layer.w.type);
  }
  const int cols = layers.begin()->w.cols;  // the same for all: they share x
  GemvInput input{x};
  thread_local std::vector<ActivationBlock> blocks;
  thread_local std::vector<ActivationBlockK> k_blocks;
  if (n == 1 && blocks32) {
    blocks.resize(cols / kQ8Block);
    QuantizeActivations(x, cols, blocks.data());
    input.blocks = blocks.data();
  }
  if (n == 1 && blocks256) {
    k_blocks.resize(cols / kSuperBlock);
    QuantizeActivationsK(x, cols, k_blocks.data());
    input.k_blocks = k_blocks.data();
  }
  thread_local Bf16Panels panels;
  if (n > 1 && bf16) PackBf16Panels(x, n, cols, &panels);
  const Bf16Panels* packed = &panels;  // this thread's: the pool's threads read it too
  // Rows [begin, end) of the layers' rows taken one after another.
  const auto slice = [&](int begin, int end) {
    int first = 0;  // the layer's first row in that numbering
    for (const LinearLayer& layer : layers) {
      const int b = std::max(begin - first, 0), e = std::min(end - first, layer.w.rows);
      if (b < e && n == 1) GemvRows(layer, input, b, e);
      if (b < e && n > 1 && BatchRoundsToBf16(layer.w)) Bf16GemmRows(*packed, layer.w, b, e, layer.y, layer.add);
      if (b < e && n > 1 && !BatchRoundsToBf16(layer.w)) SgemmRows(x, n, layer.w, b, e, layer.y, layer.add ? 1.0f : 0.0f);
      first += layer.w.rows;
    }
  };
  ForRowSlices(rows, int64_t{n} * rows * cols, slice);
}

void Linear(const float* x, int n, const Matrix& w, float* y) { Linear(x, n, {{w, y}}); }

void MatMulTransposed(int m, int n, int k, float alpha, const float* a, int lda,
                      const float* b, int ldb, float* c, int ldc) {
  if (m == 1 && ldb == k) {  // one query row (decode): a GEMV over b's rows
    Gemv(Matrix{b, n, k}, {a}, 0, n, c);
    for (int j = 0; j < n; ++j) c[j] *= alpha;
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, alpha, a, lda, b, ldb, 0.0f, c,
              ldc);
}

void MatMul(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
            int ldc) {
  if (m == 1) {  // one row (decode): c = bᵀ·a, a GEMV; OpenBLAS keeps c in registers
    cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1.0f, b, ldb, a, 1, 0.0f, c, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c,
              ldc);
}
namespace {

// b as packed float32: b's own memory when it is that, else decoded into a buffer of the
// calling thread (valid until its next call).
const float* Float32Of(const Matrix& b) {
  if (b.type == WeightType::kF32 && b.packed()) return b.floats();
  thread_local std::vector<float> buffer;
  const size_t n = static_cast<size_t>(b.rows) * b.cols;
  if (buffer.size() < n) buffer.resize(n);
  DequantizeRows(b, 0, b.rows, buffer.data());
  return buffer.data();
}

// Rows of b decoded at a time for one row's a·b: few enough to stay in L1 (16 KiB).
constexpr int kDecodeFloats = 4096;

}  // namespace

void MatMulTransposed(int m, float alpha, const float* a, int lda, const Matrix& b, float* c, int ldc) {
  const int n = b.rows, k = b.cols;
  static const CpuLevel level = DetectedCpuLevel();
  if (FewRowsTake(level, m, b)) {  // a group's queries (decode): b read once, as stored
    FewRowsFor(level).dots(m, alpha, a, lda, b, c, ldc);
    return;
  }
  if (m <= kFewRows && b.type != WeightType::kF32) {  // a quantized cache: a GEMV per row
    thread_local std::vector<ActivationBlock> blocks;
    blocks.resize(b.type == WeightType::kQ8_0 ? k / kQ8Block : 0);
    for (int i = 0; i < m; ++i) {
      GemvInput input{a + i * lda};
      if (b.type == WeightType::kQ8_0) {
        QuantizeActivations(input.values, k, blocks.data());
        input.blocks = blocks.data();
      }
      float* ci = c + i * ldc;
      Gemv(b, input, 0, n, ci);
      for (int j = 0; j < n; ++j) ci[j] *= alpha;
    }
    return;
  }
  MatMulTransposed(m, n, k, alpha, a, lda, Float32Of(b), k, c, ldc);
}

void MatMul(int m, const float* a, int lda, const Matrix& b, float* c, int ldc) {
  const int k = b.rows, n = b.cols;
  static const CpuLevel level = DetectedCpuLevel();
  if (FewRowsTake(level, m, b)) {
    FewRowsFor(level).sums(m, a, lda, b, c, ldc);
    return;
  }
  if (m <= kFewRows && b.type != WeightType::kF32) {
    // c_i = Σ_j a_i[j]·b.row(j), a few rows of b decoded at a time into L1 and added by sgemv.
    const int tile_rows = std::max(1, kDecodeFloats / n);
    thread_local std::vector<float> tile;
    tile.resize(static_cast<size_t>(tile_rows) * n);
    for (int r = 0; r < k; r += tile_rows) {
      const int rows = std::min(tile_rows, k - r);
      DequantizeRows(b, r, rows, tile.data());
      for (int i = 0; i < m; ++i) {
        cblas_sgemv(CblasRowMajor, CblasTrans, rows, n, 1.0f, tile.data(), n, a + i * lda + r, 1,
                    r == 0 ? 0.0f : 1.0f, c + i * ldc, 1);
      }
    }
    return;
  }
  MatMul(m, n, k, a, lda, Float32Of(b), n, c, ldc);
}

void RmsNorm(float* out, const float* x, const float* weight, int n, float eps) {
  float ss = 0.0f;
  for (int i = 0; i < n; ++i) ss += x[i] * x[i];
  const float scale = 1.0f / sqrtf(ss / n + eps);
  for (int i = 0; i < n; ++i) out[i] = weight[i] * (scale * x[i]);
}

void Softmax(float* x, int n) {
  static const SoftmaxKernel kernel = SoftmaxFor(DetectedCpuLevel());
  kernel(x, n);
}

void SwiGlu(float* gate, const float* up, int n) {
  static const SwiGluKernel kernel = SwiGluFor(DetectedCpuLevel());
  kernel(gate, up, n);
}

void AddInPlace(float* x, const float* y, int n) {
  for (int i = 0; i < n; ++i) x[i] += y[i];
}

void AddBias(float* x, const float* bias, int n, int width) {
  for (int t = 0; t < n; ++t) AddInPlace(x + static_cast<size_t>(t) * width, bias, width);
}

}  // namespace toyllm
