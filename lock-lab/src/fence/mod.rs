//! The fenced resource and the safety checker: a store that accepts a write only with a token
//! at least as high as any it has seen (in-process, or served over TCP to holder processes),
//! and a history of grants and writes judged for overlaps, stale writes, token order and timely
//! lost signals.

mod clock;
mod fence_server;
mod fenced;
mod history;

pub use clock::monotonic_ns;
pub use fence_server::{FenceClient, FenceServer};
pub use fenced::{FencedResource, Write};
pub use history::{Event, History, Hold, HoldEvent, Verdict, check, holds};
