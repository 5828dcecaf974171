// What Ctrl-C (SIGINT), SIGTERM and SIGHUP do to a running toyllm: the output file being
// written is removed, then the process ends by the same signal, as an uninterrupted default
// would. Files already complete stay; none is left half-written.
#ifndef TOYLLM_TOOLS_CLI_INTERRUPT_H_
#define TOYLLM_TOOLS_CLI_INTERRUPT_H_

namespace toyllm {

void RemoveUnfinishedFileOnInterrupt();

}  // namespace toyllm

#endif  // TOYLLM_TOOLS_CLI_INTERRUPT_H_
