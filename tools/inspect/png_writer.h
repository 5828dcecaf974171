// PNG files of 8-bit RGB images, compressed with zlib: enough to save a picture of attention
// without an image library.
#ifndef TOYLLM_TOOLS_INSPECT_PNG_WRITER_H_
#define TOYLLM_TOOLS_INSPECT_PNG_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace toyllm {

// Writes a width × height image, atomically. `rgb` holds the rows top to bottom, each pixel
// as three bytes R, G, B: width * height * 3 bytes.
absl::Status WritePng(const std::string& path, int width, int height,
                      const std::vector<uint8_t>& rgb);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_INSPECT_PNG_WRITER_H_
