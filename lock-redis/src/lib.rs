#![doc = include_str!("../README.md")]

mod admin;
mod builder;
mod claim_scripts;
mod claim_steps;
mod connection;
mod election;
mod error;
mod eviction;
mod held;
mod inbox;
mod invocation;
mod keys;
mod link;
mod listing;
mod node;
mod pubsub;
mod redlock;
mod redlock_admin;
mod redlock_held;
mod redlock_settle;
mod redlock_steps;
mod renewals;
mod replicas;
mod script_call;
mod scripts;
mod sentinels;
mod settings;
mod single;
mod source;
mod steps;
mod subscriber;
mod token;

pub use builder::RedisLockBuilder;
pub use redis;
pub use redlock::Redlock;
pub use single::RedisLock;
