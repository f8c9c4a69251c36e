//! The engine: simulated time, the event queue and the named random streams.
//!
//! It knows nothing of Eureka. The world ([`crate::eureka`]) owns the actors and decides what an
//! event means; the engine only orders events and hands out reproducible randomness.

mod queue;
mod rng;
mod time;

pub use queue::EventQueue;
pub use rng::{RngStream, StreamFactory, fnv1a64, fnv1a64_bytes, trial_seed};
pub use time::SimTime;
