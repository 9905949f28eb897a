//! Named in-memory services, so every `memory://NAME` in a process shares one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use super::Shared;

/// The process-wide state registered under `name`, created on first use.
pub(super) fn shared(name: &str) -> Arc<Shared> {
    static REGISTRY: OnceLock<Mutex<HashMap<String, Arc<Shared>>>> = OnceLock::new();
    let registry = REGISTRY.get_or_init(Mutex::default);
    let mut services = registry.lock().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(services.entry(name.to_owned()).or_default())
}
