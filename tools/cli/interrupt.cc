#include "tools/cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include "models/atomic_file.h"

namespace toyllm {
namespace {

void OnInterrupt(int signal_number) {
  RemoveUnfinishedFile();
  static const char kMessage[] = "\ntoyllm: interrupted\n";
  [[maybe_unused]] ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  // SA_RESETHAND restored the default action: re-raising ends the process by the signal,
  // so the shell sees an interrupted command rather than a success or an error.
  raise(signal_number);
}

}  // namespace

void RemoveUnfinishedFileOnInterrupt() {
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &action, nullptr);
}

}  // namespace toyllm
