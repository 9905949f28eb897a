#![doc = include_str!("../README.md")]

mod builder;
mod error;
mod eviction;
mod held;
mod keys;
mod link;
mod node;
mod redlock;
mod redlock_held;
mod redlock_steps;
mod replicas;
mod settings;
mod single;
mod steps;
mod subscriber;
mod token;

pub use builder::RedisLockBuilder;
pub use redis;
pub use redlock::Redlock;
pub use single::RedisLock;
