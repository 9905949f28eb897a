//! Peer lock implementations measured beside distlock on the same servers.

pub mod curator;
pub mod curator_session;
pub mod mysql;
pub mod mysql_fenced_row;
pub mod mysql_floor_release;
pub mod mysql_kill_floor;
pub mod mysql_park;
pub mod mysql_statement_floor;
pub mod pg;
pub mod pg_fenced_floor;
pub mod pg_floor;
pub mod pg_line;
pub mod pg_notify_floor;
pub mod pg_statement_floor;
pub mod redis_handoff_floor;
pub mod redis_poll;
pub mod redis_script_floor;
pub mod redis_zset;
pub mod relay;
pub mod rslock_peer;
pub mod statement_floor;
pub mod zk_floor;
pub mod zk_herd;
pub mod zk_node;
pub mod zk_node_floor;
pub mod zk_recipe_floor;

/// A random token identifying one holder.
pub fn token() -> String {
    format!("{:032x}", rand::random::<u128>())
}
