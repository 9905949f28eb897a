#![doc = include_str!("../README.md")]

mod acl;
mod builder;
mod claims;
mod confirm;
mod contract;
mod election;
mod errors;
mod expiry;
mod force;
mod held;
mod inspect;
mod label;
mod lease_names;
mod list;
mod lock;
mod lone;
mod names;
mod node;
mod nodes;
mod queue;
mod recipe;
mod semaphore;
mod session;
mod sessions;
mod settings;
mod steps;
mod tls;
mod tls_probe;

pub use acl::ZkAcl;
pub use builder::ZkLockBuilder;
pub use lock::ZkLock;
/// The ZooKeeper client this backend uses, re-exported so users name the same version.
pub use zookeeper_client;
