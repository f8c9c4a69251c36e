//! Identities: every process, route and server of a world is addressed by a dense index.

/// Index of a process (an app instance, a caller, or the server) in the world.
pub type ProcessId = usize;

/// Index of a caller route (one caller calling one app) in the world.
pub type RouteId = usize;

/// Index of a Eureka server in the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ServerId(pub usize);
