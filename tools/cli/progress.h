// Progress of a long job on stderr: a bar redrawn in place on a terminal, nothing otherwise
// (logs stay clean).
#ifndef TOYLLM_TOOLS_CLI_PROGRESS_H_
#define TOYLLM_TOOLS_CLI_PROGRESS_H_

#include <cstddef>
#include <string>

namespace toyllm {

// Draws "label [=====>    ] done/total" when stderr is a terminal; ends the line at total.
void ShowProgress(const std::string& label, size_t done, size_t total);

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_PROGRESS_H_
