#pragma once
// Hands the allocator's free memory back to the operating system.
//
// Why: glibc keeps what a thread freed in that thread's arena for its next allocations. Two
// of its defaults kept a server's hostile-body memory resident for good (docs/service.md,
// "Memory", has the numbers): its mmap threshold rises to the largest block freed so far, so
// that after one 4 MiB body later 4 MiB blocks come from the arenas instead of their own
// mappings, and the top of a thread's arena is given back only past a trim threshold that
// rises with it. Eight concurrent 4 MiB bodies left a server at 780 MB where it started at
// 20 MB; with both calls below it stays within a few MB of its start.
//
// A no-op where the C library is not glibc (the memory is then reused, not returned).
namespace ttlpred {

// Fixes the allocator's thresholds for a long-running server: every block of 1 MiB or more
// is its own mapping, unmapped when freed. Process-wide; the server calls it once at start.
void return_large_blocks_when_freed();

// Releases the free pages inside every arena. Costs a walk of the free lists (milliseconds),
// not a copy: the server calls it after a request whose body was large, which is rare.
void return_free_memory();

}  // namespace ttlpred
