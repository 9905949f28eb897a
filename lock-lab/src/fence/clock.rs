//! The system-wide monotonic clock, comparable across processes on one machine.

/// Nanoseconds on `CLOCK_MONOTONIC`: the same clock for every process on this machine, so
/// histories recorded by separate holder processes can be merged and compared.
pub fn monotonic_ns() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (now.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(now.tv_nsec as u64)
}
