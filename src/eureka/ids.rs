//! Identities: every process, route and server of a world is addressed by a dense index.

/// Index of a process (an app instance, a caller, or the server) in the world.
pub type ProcessId = usize;

/// Index of a caller route (one caller calling one app) in the world.
pub type RouteId = usize;

/// Index of a Eureka server in the world (`u32` keeps the events that carry one small).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
#[serde(transparent)]
pub struct ServerId(pub u32);

impl ServerId {
    /// The server every client talks to while a world has one server.
    pub const FIRST: ServerId = ServerId(0);

    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// Whether this is the first server (whose id traces leave out, so a standalone world's
    /// traces read as before peers existed).
    pub fn is_first(&self) -> bool {
        *self == ServerId::FIRST
    }
}
