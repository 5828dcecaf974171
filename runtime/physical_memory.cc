#include "runtime/physical_memory.h"

#include <unistd.h>

namespace toyllm {

int64_t PhysicalMemoryBytes() {
  return int64_t{sysconf(_SC_PHYS_PAGES)} * sysconf(_SC_PAGE_SIZE);
}

}  // namespace toyllm
