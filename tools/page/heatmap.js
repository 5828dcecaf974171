// The heatmap drawing shared by the attention page (tools/page/attention_page.html.in) and the
// live page (tools/server/live_page.html.in): CMakeLists.txt embeds this file as kHeatmapJs,
// and each page takes it where its {{HEATMAP_JS}} stands (tools/page/heatmap_script.h).
const toyllmHeatmap = (function () {
  'use strict';
  // ColorBrewer "Blues", white (0) to dark blue (1), as tools/inspect/attention_png.cc.
  const BLUES = [[247, 251, 255], [222, 235, 247], [198, 219, 239], [158, 202, 225],
                 [107, 174, 214], [66, 146, 198], [33, 113, 181], [8, 81, 156], [8, 48, 107]];
  function rgb(w) {
    if (typeof w !== 'number' || !Number.isFinite(w)) return [220, 30, 60];  // NaN, ±inf
    const t = Math.min(1, Math.max(0, w)) * (BLUES.length - 1);
    const i = Math.min(BLUES.length - 2, Math.floor(t)), f = t - i;
    return BLUES[i].map((c, j) => Math.round(c + (BLUES[i + 1][j] - c) * f));
  }

  // Draws rows x cols cells, color(q, k) an [r, g, b], of `cell` CSS pixels (fractional when
  // the map is shrunk to fit); each cell is a whole number of canvas pixels, so that cells
  // stay crisp. Returns the canvas pixels per cell.
  function draw(canvas, rows, cols, color, cell) {
    const px = Math.max(1, Math.round(cell * (window.devicePixelRatio || 1)));
    canvas.width = cols * px;
    canvas.height = rows * px;
    canvas.style.width = cols * cell + 'px';
    canvas.style.height = rows * cell + 'px';
    canvas.dataset.rows = rows;
    canvas.dataset.cols = cols;
    const g = canvas.getContext('2d');
    const image = g.createImageData(cols * px, rows * px), pixels = image.data, stride = cols * px * 4;
    for (let q = 0; q < rows; ++q) {
      for (let k = 0; k < cols; ++k) {
        const c = color(q, k);
        for (let y = q * px; y < (q + 1) * px; ++y) {
          for (let x = k * px, at = y * stride + x * 4; x < (k + 1) * px; ++x, at += 4) {
            pixels[at] = c[0];
            pixels[at + 1] = c[1];
            pixels[at + 2] = c[2];
            pixels[at + 3] = 255;
          }
        }
      }
    }
    g.putImageData(image, 0, 0);
    return px;
  }

  return { rgb, draw };
})();
