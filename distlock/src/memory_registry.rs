//! Named in-memory lock services, so every `connect("memory://NAME")` in a process shares one.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use lock_core::MemoryLock;

/// The process-wide [`MemoryLock`] registered under `name`, created on first use.
pub(crate) fn shared_memory_lock(name: &str) -> MemoryLock {
    static REGISTRY: OnceLock<Mutex<HashMap<String, MemoryLock>>> = OnceLock::new();
    let registry = REGISTRY.get_or_init(Mutex::default);
    let mut services = registry.lock().unwrap_or_else(PoisonError::into_inner);
    services.entry(name.to_owned()).or_default().clone()
}
