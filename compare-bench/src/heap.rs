//! The benchmark's heap, counted: the system allocator behind a counter of the bytes live now,
//! so a scenario can state the client's memory per held lock exactly (resident memory moves in
//! pages and reuses what earlier scenarios freed, so it cannot).

use std::alloc::System;

use cap::Cap;

/// Every allocation of the process goes through this counter; no limit is set.
#[global_allocator]
static HEAP: Cap<System> = Cap::new(System, usize::MAX);

/// Bytes allocated on the heap and not yet freed, by every thread of the process.
pub fn live_bytes() -> usize {
    HEAP.allocated()
}
