#include "util/free_memory.hpp"

#include <cstdlib>  // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ttlpred {

void return_large_blocks_when_freed() {
#if defined(__GLIBC__)
  // Setting either threshold turns off glibc's dynamic adjustment of both.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 2 << 20);
#endif
}

void return_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace ttlpred
