//! The server's two-level response cache (FACTS.md §3, `core/registry/ResponseCacheImpl.java`).
//!
//! Two keys are modelled, each by its own [`ResponseCache`]: the full registry (`ALL_APPS`,
//! [`Payload`]) and the delta (`ALL_APPS_DELTA`, `delta::DeltaPayload`). Eureka keeps both in the
//! same two maps and invalidates both on every change; one cache per key behaves the same, since
//! each key expires, loads and ticks on its own. A payload is an immutable snapshot taken when
//! the read-write level (re)loads it; the read-only level holds a reference to a snapshot and only
//! changes on its timer.

use std::cell::Cell;
use std::rc::Rc;

use crate::engine::SimTime;

pub use super::protocol::Payload;
use super::status::InstanceStatus;

/// What the cache stores for one key: a generated payload that knows its generation number.
pub trait Generated {
    /// What the loader reads from the registry.
    type Content;
    fn build(version: u64, generated_at: SimTime, content: Self::Content) -> Self;
    /// Generation number; a different number means a different object (Eureka compares the
    /// read-only and read-write values by reference).
    fn version(&self) -> u64;
}

impl Generated for Payload {
    type Content = Vec<Option<InstanceStatus>>;

    fn build(version: u64, generated_at: SimTime, statuses: Self::Content) -> Payload {
        Payload {
            version,
            generated_at,
            statuses,
            hash: Cell::new(None),
        }
    }

    fn version(&self) -> u64 {
        self.version
    }
}

/// One key of the response cache, by default `ALL_APPS`.
#[derive(Debug)]
pub struct ResponseCache<T: Generated = Payload> {
    /// Guava `readWriteCacheMap` entry: payload and when it was written (`expireAfterWrite`).
    read_write: Option<(Rc<T>, SimTime)>,
    /// `readOnlyCacheMap` entry: only present after the key was read once.
    read_only: Option<Rc<T>>,
    use_read_only: bool,
    auto_expiration_ms: u64,
    next_version: u64,
}

impl<T: Generated> ResponseCache<T> {
    pub fn new(use_read_only: bool, auto_expiration_ms: u64) -> ResponseCache<T> {
        ResponseCache {
            read_write: None,
            read_only: None,
            use_read_only,
            auto_expiration_ms,
            next_version: 0,
        }
    }

    /// `readWriteCacheMap.get(key)`: the cached payload unless invalidated or expired, else a
    /// fresh snapshot from `registry` (loaded now).
    fn read_write_get(&mut self, now: SimTime, registry: impl FnOnce() -> T::Content) -> Rc<T> {
        if let Some((payload, written)) = &self.read_write
            && now.saturating_since(*written) < self.auto_expiration_ms
        {
            return Rc::clone(payload);
        }
        let payload = Rc::new(T::build(self.next_version, now, registry()));
        self.next_version += 1;
        self.read_write = Some((Rc::clone(&payload), now));
        payload
    }

    /// `ResponseCacheImpl#getValue`: with the read-only level on, serve it, filling it from the
    /// read-write level on the key's first read; otherwise serve the read-write level.
    /// Returns the payload and whether the read-only level was filled by this read.
    pub fn get(&mut self, now: SimTime, registry: impl FnOnce() -> T::Content) -> (Rc<T>, bool) {
        if !self.use_read_only {
            return (self.read_write_get(now, registry), false);
        }
        if let Some(payload) = &self.read_only {
            return (Rc::clone(payload), false);
        }
        let payload = self.read_write_get(now, registry);
        self.read_only = Some(Rc::clone(&payload));
        (payload, true)
    }

    /// `invalidate(...)`: drops the read-write entry; the read-only level is untouched until the
    /// next tick.
    pub fn invalidate(&mut self) {
        self.read_write = None;
    }

    /// The cache-fill timer's task: for a key already in the read-only level, read the read-write
    /// level (reloading now if invalidated or expired) and replace the read-only value if it is a
    /// different object. Returns the new value when it was replaced.
    pub fn tick(&mut self, now: SimTime, registry: impl FnOnce() -> T::Content) -> Option<Rc<T>> {
        let current_version = self.read_only.as_ref()?.version();
        let fresh = self.read_write_get(now, registry);
        if fresh.version() == current_version {
            return None;
        }
        self.read_only = Some(Rc::clone(&fresh));
        Some(fresh)
    }

    pub fn uses_read_only(&self) -> bool {
        self.use_read_only
    }

    /// What a `GET /apps` would be served right now without loading anything, if known.
    pub fn served(&self) -> Option<&Rc<T>> {
        if self.use_read_only {
            self.read_only.as_ref()
        } else {
            self.read_write.as_ref().map(|(p, _)| p)
        }
    }
}

/// First run of the cache-fill timer: the next wall-clock multiple of the interval,
/// `new Date((now / interval) * interval + interval)` (FACTS.md §3), as a delay from `wall_now`.
pub fn first_fill_delay(wall_now_ms: u64, interval_ms: u64) -> u64 {
    (wall_now_ms / interval_ms) * interval_ms + interval_ms - wall_now_ms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(status: InstanceStatus) -> impl FnOnce() -> Vec<Option<InstanceStatus>> {
        move || vec![Some(status)]
    }

    #[test]
    fn first_fill_is_wall_clock_aligned() {
        let minute = 1_700_000_040_000; // a multiple of 60 000
        assert_eq!(first_fill_delay(minute + 7_000, 30_000), 23_000);
        assert_eq!(first_fill_delay(minute + 20_000, 30_000), 10_000);
        assert_eq!(first_fill_delay(minute + 37_000, 30_000), 23_000);
        assert_eq!(
            first_fill_delay(minute, 30_000),
            30_000,
            "on a boundary: the next one"
        );
    }

    #[test]
    fn read_only_lags_until_the_tick() {
        let mut cache = ResponseCache::<Payload>::new(true, 180_000);
        let (first, filled) = cache.get(SimTime(0), snapshot(InstanceStatus::Up));
        assert!(filled && first.is_up(0));
        cache.invalidate();
        let (served, _) = cache.get(SimTime(10), snapshot(InstanceStatus::Down));
        assert!(
            served.is_up(0),
            "read-only level still serves the old payload"
        );
        let new = cache
            .tick(SimTime(30_000), snapshot(InstanceStatus::Down))
            .unwrap();
        assert!(!new.is_up(0));
        assert!(
            !cache
                .get(SimTime(30_001), snapshot(InstanceStatus::Up))
                .0
                .is_up(0)
        );
        assert!(
            cache
                .tick(SimTime(60_000), snapshot(InstanceStatus::Up))
                .is_none(),
            "no change"
        );
    }

    #[test]
    fn read_write_expires_after_write() {
        let mut cache = ResponseCache::<Payload>::new(true, 180_000);
        cache.get(SimTime(0), snapshot(InstanceStatus::Up));
        assert!(
            cache
                .tick(SimTime(179_999), snapshot(InstanceStatus::Up))
                .is_none()
        );
        let reloaded = cache
            .tick(SimTime(180_000), snapshot(InstanceStatus::Up))
            .unwrap();
        assert_eq!(reloaded.generated_at, SimTime(180_000));
    }

    #[test]
    fn without_read_only_a_read_after_invalidation_is_fresh() {
        let mut cache = ResponseCache::<Payload>::new(false, 180_000);
        cache.get(SimTime(0), snapshot(InstanceStatus::Up));
        cache.invalidate();
        assert!(
            !cache
                .get(SimTime(1), snapshot(InstanceStatus::Down))
                .0
                .is_up(0)
        );
        assert!(
            cache
                .tick(SimTime(30_000), snapshot(InstanceStatus::Up))
                .is_none()
        );
    }

    #[test]
    fn keys_never_read_are_not_ticked() {
        let mut cache = ResponseCache::<Payload>::new(true, 180_000);
        assert!(
            cache
                .tick(SimTime(30_000), snapshot(InstanceStatus::Up))
                .is_none()
        );
        assert!(cache.served().is_none());
    }
}
