//! Which Eureka server a client's call goes to (FACTS.md §5.7 as corrected in
//! `docs/design/peers.md` §1.5): the endpoint list, `RetryableEurekaHttpClient` (sticky server,
//! up to 3 attempts, quarantine) and `SessionedEurekaHttpClient` (a new session every 10-30
//! minutes). Each client has two such stacks, for registration and for queries.
//!
//! [`ClientTransport`] puts them together for one `DiscoveryClient`: it picks each call's
//! server, and after a failed attempt the next one, or gives up.

use crate::engine::{RngStream, SimTime, StreamFactory};

use super::ids::ServerId;
use super::protocol::{Call, Reply};

/// `RetryableEurekaHttpClient.DEFAULT_NUMBER_OF_RETRIES`: attempts per call.
pub const NUMBER_OF_RETRIES: u32 = 3;
/// `eureka.client.transport.retryable-client-quarantine-refresh-percentage` (default).
pub const QUARANTINE_REFRESH_PERCENTAGE: f64 = 0.66;
/// `eureka.client.transport.sessioned-client-reconnect-interval-seconds` (1200), in ms.
pub const SESSION_RECONNECT_INTERVAL_MS: u64 = 1_200_000;
/// `eureka.client.eureka-service-url-poll-interval-seconds` (300), in ms: how often the
/// endpoint list is resolved again (`AsyncResolver`).
pub const SERVICE_URL_POLL_INTERVAL_MS: u64 = 300_000;

/// A client's transport settings (`EurekaClientConfigBean`, `CloudEurekaTransportConfig`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransportSettings {
    /// `eureka-service-url-poll-interval-seconds`, in ms.
    pub poll_interval_ms: u64,
    /// `transport.sessioned-client-reconnect-interval-seconds`, in ms.
    pub session_ms: u64,
    /// `transport.retryable-client-quarantine-refresh-percentage`.
    pub quarantine_refresh_percentage: f64,
}

impl Default for TransportSettings {
    fn default() -> Self {
        TransportSettings {
            poll_interval_ms: SERVICE_URL_POLL_INTERVAL_MS,
            session_ms: SESSION_RECONNECT_INTERVAL_MS,
            quarantine_refresh_percentage: QUARANTINE_REFRESH_PERCENTAGE,
        }
    }
}

/// One endpoint of a client's list: a server, and which of its listings it is. A server
/// listed under two zones is two endpoints (`ConfigClusterResolver#getClusterEndpoints` makes
/// an `AwsEndpoint` per zone and URL, and `AwsEndpoint#equals` compares the zone too), so each
/// has its own place in the order and is quarantined on its own (`RetryableEurekaHttpClient`'s
/// `quarantineSet` holds endpoints). Within one zone a server is listed once
/// (`parse/endpoints.rs`), so its listings are told apart by their rank, `nth`: 0 for its
/// first, 1 for the next zone that lists it again, and so on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Endpoint {
    pub server: ServerId,
    pub nth: u32,
}

/// The servers a client may call, in the order `ZoneAffinityClusterResolver` gives: its own
/// zone's first, each group shuffled (`ResolverUtils#randomize`). From Eureka 1.10.14 the
/// shuffle is new at every resolve (`ThreadLocalRandom`), every 300 s; before, it is one
/// permutation per host (`new Random(localIPv4.hashCode())`), drawn once here.
#[derive(Debug, Clone)]
pub struct Endpoints {
    own: Vec<Endpoint>,
    others: Vec<Endpoint>,
    fixed_per_host: bool,
    order: Vec<Endpoint>,
    /// When the list is resolved again (`None`: not resolved yet).
    next_resolve: Option<SimTime>,
    poll_interval_ms: u64,
}

impl Endpoints {
    /// The own zone's servers and the other zones', in the order resolved; a server may be in
    /// both, or in two other zones, and is then one [`Endpoint`] per listing.
    pub fn new(own: Vec<ServerId>, others: Vec<ServerId>, fixed_per_host: bool) -> Endpoints {
        // Listings so far per server (indices are dense: a count per server, not a search of
        // the list, which would make a client of n endpoints cost n²).
        let servers = own.iter().chain(&others).map(|s| s.index() + 1).max();
        let mut listed = vec![0u32; servers.unwrap_or(0)];
        let mut listing = |server: ServerId| {
            let count = &mut listed[server.index()];
            let nth = *count;
            *count += 1;
            Endpoint { server, nth }
        };
        let own = own.into_iter().map(&mut listing).collect();
        let others = others.into_iter().map(&mut listing).collect();
        Endpoints {
            own,
            others,
            fixed_per_host,
            order: Vec::new(),
            next_resolve: None,
            poll_interval_ms: SERVICE_URL_POLL_INTERVAL_MS,
        }
    }

    /// Resolved again every `poll_interval_ms` instead of 300 s.
    pub fn with_poll_interval(mut self, poll_interval_ms: u64) -> Endpoints {
        self.poll_interval_ms = poll_interval_ms.max(1);
        self
    }

    /// The list at `now`. `AsyncResolver` resolves it at its warm-up (the first call) and then
    /// on its own timer every `poll_interval_ms`, whoever calls (a fixed-per-host shuffle keeps
    /// its first order). Every resolve since the last call is drawn, in order, from the
    /// resolver's own stream, so the order at an instant does not depend on which stack called
    /// when: a stack whose calls are left out (`DiscoveryClient::leave_out_fetches`)
    /// changes nothing the other one sees. (`AsyncResolver` refreshed every
    /// `eurekaServiceUrlPollIntervalSeconds`, FACTS.md §5.7; `EurekaHttpClients
    /// #defaultBootstrapResolver`.)
    pub fn at(&mut self, now: SimTime, rng: &mut RngStream) -> &[Endpoint] {
        match self.next_resolve {
            None => {
                self.resolve(rng);
                self.next_resolve = Some(now + self.poll_interval_ms);
            }
            Some(mut due) if now >= due => {
                while now >= due {
                    if !self.fixed_per_host {
                        self.resolve(rng);
                    }
                    due += self.poll_interval_ms;
                }
                self.next_resolve = Some(due);
            }
            Some(_) => {}
        }
        &self.order
    }

    /// `ZoneAffinityClusterResolver#getClusterEndpoints`: the own zone's servers, then the
    /// others, each group randomized by `ResolverUtils#randomize`. Up to Eureka 1.10.13 each
    /// call builds `new Random(LOCAL_IPV4_ADDRESS.hashCode())`, so both groups start from the
    /// same host seed: here the same state of the host's stream (a copy per group).
    fn resolve(&mut self, rng: &mut RngStream) {
        self.order.clear();
        let host_seed = self.fixed_per_host.then(|| rng.clone());
        for group in [&self.own, &self.others] {
            let start = self.order.len();
            self.order.extend_from_slice(group);
            match &host_seed {
                Some(seeded) => {
                    randomize_up_to_1_10_13(&mut self.order[start..], &mut seeded.clone())
                }
                None => shuffle(&mut self.order[start..], rng),
            }
        }
    }
}

/// Fisher-Yates, back to front (`Collections#shuffle`'s walk): `ResolverUtils#randomize` from
/// Eureka 1.10.14 (`Collections.shuffle(randomList, ThreadLocalRandom.current())`, ebb98c5c).
fn shuffle(items: &mut [Endpoint], rng: &mut RngStream) {
    for i in (1..items.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

/// `ResolverUtils#randomize` up to Eureka 1.10.13 (v1.10.13 lines 88-102), with the host's
/// `Random`: `for (i = 0; i < size - 1; i++) { pos = random.nextInt(size - i); if (pos != i)
/// swap(i, pos); }`. `pos` is drawn from `[0, size - i)`, not `[i, size)`, so a later step can
/// swap an earlier-placed element back out and the result is not uniform. For three URLs
/// `[A, B, C]` the six equally likely `(pos0, pos1)` give `ABC` twice (`(0,1)`, `(1,0)`), `BAC`
/// twice (`(0,0)`, `(1,1)`), `BCA` (`(2,0)`) and `CBA` (`(2,1)`): the first pick is A with
/// probability 1/3, B 1/2, C 1/6, and `ACB`, `CAB` never come out.
fn randomize_up_to_1_10_13(items: &mut [Endpoint], rng: &mut RngStream) {
    let size = items.len();
    if size < 2 {
        return;
    }
    for i in 0..size - 1 {
        let pos = rng.below((size - i) as u64) as usize;
        if pos != i {
            items.swap(i, pos);
        }
    }
}

/// What to do after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Accepted: the server becomes sticky.
    Done,
    /// Try this server next.
    Retry(ServerId),
    /// No server left or 3 attempts failed: the call fails (`TransportException`).
    GiveUp,
}

/// One call's attempts: which try, the candidates it drew, and whether the current server
/// came from them (a sticky server that fails is not quarantined).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempts {
    retry: u32,
    candidates: Option<Vec<Endpoint>>,
    next_index: usize,
    current: Endpoint,
    from_candidates: bool,
}

impl Attempts {
    /// The server the current attempt goes to.
    pub fn server(&self) -> ServerId {
        self.current.server
    }
}

/// `RetryableEurekaHttpClient`: the sticky endpoint (`delegate`) and the quarantine set.
#[derive(Debug, Clone)]
pub struct RetryableClient {
    sticky: Option<Endpoint>,
    quarantine: Vec<Endpoint>,
    quarantine_refresh_percentage: f64,
}

impl Default for RetryableClient {
    fn default() -> Self {
        RetryableClient::new(QUARANTINE_REFRESH_PERCENTAGE)
    }
}

impl RetryableClient {
    pub fn new(quarantine_refresh_percentage: f64) -> RetryableClient {
        RetryableClient {
            sticky: None,
            quarantine: Vec::new(),
            quarantine_refresh_percentage,
        }
    }

    /// `#getHostCandidates`: the endpoints minus the quarantined ones, unless the quarantine
    /// holds at least `(int)(n x 0.66)` of them (at most n), in which case it is cleared first
    /// and every endpoint is a candidate. With 3 endpoints or fewer that threshold is 1: any
    /// quarantine is cleared and never filters.
    fn candidates(&mut self, endpoints: &[Endpoint]) -> Vec<Endpoint> {
        self.quarantine.retain(|s| endpoints.contains(s));
        let n = endpoints.len();
        let threshold = ((n as f64 * self.quarantine_refresh_percentage) as usize).min(n);
        if !self.quarantine.is_empty() && self.quarantine.len() >= threshold {
            self.quarantine.clear();
        }
        endpoints
            .iter()
            .copied()
            .filter(|s| !self.quarantine.contains(s))
            .collect()
    }

    /// A call begins (`#execute`, first try): on the sticky server if there is one, else on
    /// the first candidate. `None`: no endpoint at all.
    pub fn begin(&mut self, endpoints: &[Endpoint]) -> Option<Attempts> {
        let mut attempts = Attempts {
            retry: 0,
            candidates: None,
            next_index: 0,
            current: self.sticky.unwrap_or(Endpoint {
                server: ServerId::FIRST,
                nth: 0,
            }),
            from_candidates: false,
        };
        if self.sticky.is_none() {
            attempts.current = self.next_candidate(&mut attempts, endpoints)?;
        }
        Some(attempts)
    }

    /// The next candidate of the call, drawing the candidates once per call.
    fn next_candidate(
        &mut self,
        attempts: &mut Attempts,
        endpoints: &[Endpoint],
    ) -> Option<Endpoint> {
        if attempts.candidates.is_none() {
            attempts.candidates = Some(self.candidates(endpoints));
        }
        let candidates = attempts.candidates.as_ref()?;
        let server = *candidates.get(attempts.next_index)?;
        attempts.next_index += 1;
        attempts.from_candidates = true;
        Some(server)
    }

    /// The current attempt ended: accepted (the server becomes sticky), or refused, timed out
    /// or answered with a status the evaluator does not accept. A failure drops the sticky
    /// server and quarantines a candidate (not a sticky one); the next try takes the next
    /// candidate, up to 3 tries.
    pub fn on_result(
        &mut self,
        attempts: &mut Attempts,
        accepted: bool,
        endpoints: &[Endpoint],
    ) -> Next {
        if accepted {
            self.sticky = Some(attempts.current);
            return Next::Done;
        }
        if self.sticky == Some(attempts.current) {
            self.sticky = None;
        }
        if attempts.from_candidates && !self.quarantine.contains(&attempts.current) {
            self.quarantine.push(attempts.current);
        }
        attempts.retry += 1;
        if attempts.retry >= NUMBER_OF_RETRIES {
            return Next::GiveUp;
        }
        match self.next_candidate(attempts, endpoints) {
            Some(endpoint) => {
                attempts.current = endpoint;
                Next::Retry(endpoint.server)
            }
            None => Next::GiveUp,
        }
    }

    /// The sticky server, if any.
    pub fn sticky(&self) -> Option<ServerId> {
        self.sticky.map(|e| e.server)
    }
}

/// `SessionedEurekaHttpClient`: at a call, a session older than its drawn duration ends and the
/// retryable client starts anew (no sticky server, an empty quarantine). Durations are
/// `d + d (U - 0.5)`, U in [0, 1): 600 to 1800 s by default (`#randomizeSessionDuration`). The
/// first session starts at the first call (`lastReconnectTimeStamp = -1`).
#[derive(Debug, Clone)]
pub struct Session {
    started: Option<SimTime>,
    duration_ms: u64,
    pub client: RetryableClient,
    settings: TransportSettings,
}

impl Default for Session {
    fn default() -> Self {
        Session::new(TransportSettings::default())
    }
}

impl Session {
    pub fn new(settings: TransportSettings) -> Session {
        Session {
            started: None,
            duration_ms: 0,
            client: RetryableClient::new(settings.quarantine_refresh_percentage),
            settings,
        }
    }

    /// Before a call at `now`: whether a new session began (drawing its duration from `rng`).
    pub fn before_call(&mut self, now: SimTime, rng: &mut RngStream) -> bool {
        let over = self
            .started
            .is_none_or(|at| now.saturating_since(at) >= self.duration_ms);
        if over {
            self.started = Some(now);
            let d = self.settings.session_ms as f64;
            self.duration_ms = (d + d * (rng.unit() - 0.5)) as u64;
            self.client = RetryableClient::new(self.settings.quarantine_refresh_percentage);
        }
        over
    }

    pub fn duration_ms(&self) -> u64 {
        self.duration_ms
    }

    /// Steady start: a session running for a while, sticky on `server`. Seen at a random
    /// instant, a session is picked in proportion to its length (density of d in [d/2, 3d/2]
    /// proportional to d: `d = sqrt(lo^2 + u (hi^2 - lo^2))`) and has a uniform part of it
    /// left, which is all the model keeps: it ends `left` from now.
    fn start_steady(&mut self, now: SimTime, server: Endpoint, rng: &mut RngStream) {
        let d = self.settings.session_ms as f64;
        let (lo, hi) = (d / 2.0, 1.5 * d);
        let length = (lo * lo + rng.unit() * (hi * hi - lo * lo)).sqrt();
        let left = (rng.unit() * length) as u64;
        self.started = Some(now);
        self.duration_ms = left;
        self.client = RetryableClient::new(self.settings.quarantine_refresh_percentage);
        self.client.sticky = Some(server);
    }
}

/// The two `Sessioned(Retryable(..))` stacks of a client (`EurekaHttpClients
/// #registrationClientFactory`, `#queryClientFactory`), which share one endpoint resolver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stack {
    /// Register, renew, cancel, status changes.
    Registration,
    /// `GET /apps`, `GET /apps/delta`.
    Query,
}

impl Stack {
    pub fn of(call: &Call) -> Stack {
        match call {
            Call::FetchAll { .. } | Call::FetchDelta => Stack::Query,
            _ => Stack::Registration,
        }
    }
}

/// `ServerStatusEvaluators#legacyEvaluator`: whether a reply ends the call on this server. Every
/// answer the model gives is accepted (2xx; 404 to a register or heartbeat; 403 to a delta)
/// except no answer at all and a 403 to `GET /apps` (a peer that opened empty, FACTS.md §2.7).
pub fn accepted(reply: &Reply) -> bool {
    !matches!(reply, Reply::Unreachable { .. } | Reply::Forbidden { .. })
}

/// One call in flight: its stack, its attempts so far.
#[derive(Debug, Clone)]
struct InFlight {
    seq: u32,
    call: Call,
    stack: Stack,
    attempts: Attempts,
}

/// What the client does with a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// The call is answered by this server: handle the reply.
    Answered(ServerId),
    /// The attempt failed: send the call again to this server under a new sequence number
    /// (a late answer to the failed attempt is then stale).
    Retry(ServerId, Call, u32),
    /// The call failed on every attempt (`TransportException`): handle it as failed.
    Failed(Call),
    /// Not a call of this client's (an earlier incarnation's): drop it.
    Stale,
}

/// The streams a transport draws from: one per stack (its sessions) and one for the shared
/// resolver (its shuffles). Apart, so that what one stack does never moves what the other
/// draws (a client whose fetches nobody observes leaves them out).
#[derive(Debug)]
pub struct TransportStreams {
    /// `transport/<name>`: the registration stack's sessions.
    pub registration: RngStream,
    /// `transport/<name>/query`: the query stack's sessions.
    pub query: RngStream,
    /// `resolver/<name>`: the endpoint shuffles.
    pub resolver: RngStream,
}

impl TransportStreams {
    /// The streams of the process (incarnation) called `name` (`svc-0`, `svc-0#1`).
    pub fn named(streams: &StreamFactory, name: &str) -> TransportStreams {
        TransportStreams {
            registration: streams.stream(&format!("transport/{name}")),
            query: streams.stream(&format!("transport/{name}/query")),
            resolver: streams.stream(&format!("resolver/{name}")),
        }
    }
}

/// A client's way to the Eureka servers: the endpoint list, the two stacks and the calls in
/// flight. Only built for a client with more than one endpoint (one endpoint never draws, so
/// its calls go straight to it); it draws from its own streams, so a cluster and a standalone
/// variant of a scenario keep their other random numbers in common.
#[derive(Debug)]
pub struct ClientTransport {
    endpoints: Endpoints,
    registration: Session,
    query: Session,
    streams: TransportStreams,
    calls: Vec<InFlight>,
    next_seq: u32,
}

impl ClientTransport {
    pub fn new(
        endpoints: Endpoints,
        settings: TransportSettings,
        streams: TransportStreams,
    ) -> ClientTransport {
        ClientTransport {
            endpoints: endpoints.with_poll_interval(settings.poll_interval_ms),
            registration: Session::new(settings),
            query: Session::new(settings),
            streams,
            calls: Vec::new(),
            next_seq: 1,
        }
    }

    /// The transport of the same process after a restart: the same endpoints (a fixed
    /// per-host order stays, it is drawn from the host's address), fresh sessions, no sticky
    /// server, no call in flight, drawing from `streams`.
    pub fn restarted(&self, streams: TransportStreams) -> ClientTransport {
        let mut endpoints = self.endpoints.clone();
        if !endpoints.fixed_per_host {
            endpoints.next_resolve = None;
        }
        ClientTransport {
            endpoints,
            registration: Session::new(self.registration.settings),
            query: Session::new(self.query.settings),
            streams,
            calls: Vec::new(),
            next_seq: self.next_seq,
        }
    }

    /// A call begins at `now`: the session is renewed if it is over, then the sticky server or
    /// the first candidate. Returns the server and the call's sequence number; `None` if there
    /// is no endpoint.
    pub fn begin(&mut self, now: SimTime, call: Call) -> Option<(ServerId, u32)> {
        let stack = Stack::of(&call);
        let (session, rng, order) = self.session_and_order(now, stack);
        session.before_call(now, rng);
        let attempts = session.client.begin(order)?;
        let seq = self.next_seq();
        let server = attempts.server();
        self.calls.push(InFlight {
            seq,
            call,
            stack,
            attempts,
        });
        Some((server, seq))
    }

    /// The session of `stack`, its random stream and the endpoint order as of `now`, borrowed
    /// field by field: the order stays in `endpoints` (no copy per call or reply). The order
    /// draws from the resolver's own stream, so it is the same whether the session's draw comes
    /// before or after it.
    fn session_and_order(
        &mut self,
        now: SimTime,
        stack: Stack,
    ) -> (&mut Session, &mut RngStream, &[Endpoint]) {
        let ClientTransport {
            endpoints,
            registration,
            query,
            streams,
            ..
        } = self;
        let (session, rng) = match stack {
            Stack::Registration => (registration, &mut streams.registration),
            Stack::Query => (query, &mut streams.query),
        };
        (session, rng, endpoints.at(now, &mut streams.resolver))
    }

    /// A new sequence number (never 0, which means no transport).
    fn next_seq(&mut self) -> u32 {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1).max(1);
        seq
    }

    /// The reply to call `seq` came back.
    pub fn on_reply(&mut self, now: SimTime, seq: u32, reply: &Reply) -> Delivery {
        let Some(i) = self.calls.iter().position(|c| c.seq == seq) else {
            return Delivery::Stale;
        };
        let mut flight = self.calls.swap_remove(i);
        let (session, _, order) = self.session_and_order(now, flight.stack);
        let next = session
            .client
            .on_result(&mut flight.attempts, accepted(reply), order);
        match next {
            Next::Done => Delivery::Answered(flight.attempts.server()),
            Next::GiveUp => Delivery::Failed(flight.call),
            Next::Retry(server) => {
                let call = flight.call;
                let seq = self.next_seq();
                flight.seq = seq;
                self.calls.push(flight);
                Delivery::Retry(server, call, seq)
            }
        }
    }

    /// Steady start: both stacks in a running session, each sticky on the first server of
    /// the order its session began with (from Eureka 1.10.14 two independent shuffles, one
    /// per session start; before, the host's one order). Returns (registration, query).
    pub fn start_steady(&mut self, now: SimTime) -> (ServerId, ServerId) {
        let resolver = &mut self.streams.resolver;
        let registration = self.endpoints.at(now, resolver).first().copied();
        if !self.endpoints.fixed_per_host {
            self.endpoints.next_resolve = None;
        }
        let query = self.endpoints.at(now, resolver).first().copied();
        let (Some(registration), Some(query)) = (registration, query) else {
            return (ServerId::FIRST, ServerId::FIRST);
        };
        let streams = &mut self.streams;
        self.registration
            .start_steady(now, registration, &mut streams.registration);
        self.query.start_steady(now, query, &mut streams.query);
        (registration.server, query.server)
    }

    /// The sticky server of a stack, if any.
    pub fn sticky(&self, stack: Stack) -> Option<ServerId> {
        match stack {
            Stack::Registration => self.registration.client.sticky(),
            Stack::Query => self.query.client.sticky(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::StreamFactory;

    const REFUSED: Reply = Reply::Unreachable {
        server: ServerId(0),
        why: crate::eureka::protocol::Unanswered::Refused,
    };

    fn ids(v: &[u32]) -> Vec<ServerId> {
        v.iter().map(|&i| ServerId(i)).collect()
    }

    /// Endpoints of distinct servers (each its server's first listing).
    fn eps(v: &[u32]) -> Vec<Endpoint> {
        ids(v)
            .into_iter()
            .map(|server| Endpoint { server, nth: 0 })
            .collect()
    }

    /// `#execute` with three endpoints: the first call goes to the first candidate; a failure
    /// quarantines it and the next candidate is tried; success makes that one sticky and the
    /// next call starts there.
    #[test]
    fn a_failed_server_is_skipped_and_the_one_that_answers_sticks() {
        let endpoints = eps(&[0, 1, 2]);
        let mut c = RetryableClient::default();
        let mut a = c.begin(&endpoints).unwrap();
        assert_eq!(a.server(), ServerId(0));
        assert_eq!(
            c.on_result(&mut a, false, &endpoints),
            Next::Retry(ServerId(1))
        );
        assert_eq!(c.on_result(&mut a, true, &endpoints), Next::Done);
        assert_eq!(c.sticky(), Some(ServerId(1)));
        let a = c.begin(&endpoints).unwrap();
        assert_eq!(a.server(), ServerId(1));
    }

    /// A sticky server that fails is dropped but not quarantined, so the candidates of the same
    /// call may start with it again; three failures give up.
    #[test]
    fn a_failing_sticky_server_is_not_quarantined() {
        let endpoints = eps(&[1, 0, 2]);
        let mut c = RetryableClient::default();
        let mut a = c.begin(&endpoints).unwrap();
        assert_eq!(c.on_result(&mut a, true, &endpoints), Next::Done);
        assert_eq!(c.sticky(), Some(ServerId(1)));
        let mut a = c.begin(&endpoints).unwrap();
        assert_eq!(a.server(), ServerId(1));
        assert_eq!(
            c.on_result(&mut a, false, &endpoints),
            Next::Retry(ServerId(1))
        );
        assert_eq!(
            c.on_result(&mut a, false, &endpoints),
            Next::Retry(ServerId(0))
        );
        assert_eq!(c.on_result(&mut a, false, &endpoints), Next::GiveUp);
        assert_eq!(c.sticky(), None);
    }

    /// `#getHostCandidates`: the threshold is (int)(n x 0.66). With 3 endpoints it is 1, so a
    /// quarantined server is back among the candidates at the next call; with 5 it is 3, so two
    /// quarantined servers are skipped and a third clears them all.
    #[test]
    fn quarantine_filters_only_above_three_endpoints() {
        let three = eps(&[0, 1, 2]);
        let mut c = RetryableClient::default();
        let mut a = c.begin(&three).unwrap();
        c.on_result(&mut a, false, &three);
        c.on_result(&mut a, true, &three);
        c.sticky = None;
        assert_eq!(c.begin(&three).unwrap().server(), ServerId(0), "3: cleared");

        let five = eps(&[0, 1, 2, 3, 4]);
        let mut c = RetryableClient::default();
        let mut a = c.begin(&five).unwrap();
        assert_eq!(c.on_result(&mut a, false, &five), Next::Retry(ServerId(1)));
        assert_eq!(c.on_result(&mut a, false, &five), Next::Retry(ServerId(2)));
        assert_eq!(c.on_result(&mut a, false, &five), Next::GiveUp);
        // 3 quarantined >= threshold 3: cleared, server 0 again.
        assert_eq!(c.begin(&five).unwrap().server(), ServerId(0));
        let mut c = RetryableClient::default();
        let mut a = c.begin(&five).unwrap();
        c.on_result(&mut a, false, &five);
        c.on_result(&mut a, false, &five);
        c.on_result(&mut a, true, &five);
        c.sticky = None;
        // 2 quarantined < 3: skipped.
        assert_eq!(c.begin(&five).unwrap().server(), ServerId(2));
    }

    /// A server listed under two zones is two endpoints (`AwsEndpoint#equals` compares the
    /// zone): with a listed in z1 and again in z2 beside b, the list is a, a, b; a call refused
    /// by a is tried on a's other listing next, then on b (`RetryableEurekaHttpClient#execute`
    /// walks the candidates by index), where one endpoint per server would go to b at once. With
    /// five listings (a twice, b, c, d: threshold (int)(5 x 0.66) = 3) the two quarantined
    /// listings of a are two of the three that clear the quarantine, so the next call skips
    /// both and starts at b.
    #[test]
    fn a_server_under_two_zones_is_two_endpoints_tried_and_quarantined_apart() {
        let mut rng = StreamFactory::new(3).stream("resolver/test");
        let mut e = Endpoints::new(ids(&[0]), ids(&[0, 1]), true);
        let order = e.at(SimTime(0), &mut rng).to_vec();
        assert_eq!(
            order[0],
            Endpoint {
                server: ServerId(0),
                nth: 0
            }
        );
        let mut rest = order[1..].to_vec();
        rest.sort();
        assert_eq!(
            rest,
            [
                Endpoint {
                    server: ServerId(0),
                    nth: 1
                },
                Endpoint {
                    server: ServerId(1),
                    nth: 0
                },
            ]
        );
        let a_a_b = [
            Endpoint {
                server: ServerId(0),
                nth: 0,
            },
            Endpoint {
                server: ServerId(0),
                nth: 1,
            },
            Endpoint {
                server: ServerId(1),
                nth: 0,
            },
        ];
        let mut c = RetryableClient::default();
        let mut a = c.begin(&a_a_b).unwrap();
        assert_eq!(a.server(), ServerId(0));
        assert_eq!(c.on_result(&mut a, false, &a_a_b), Next::Retry(ServerId(0)));
        assert_eq!(c.on_result(&mut a, false, &a_a_b), Next::Retry(ServerId(1)));

        let mut five = a_a_b.to_vec();
        five.extend(eps(&[2, 3]));
        let mut c = RetryableClient::default();
        let mut a = c.begin(&five).unwrap();
        c.on_result(&mut a, false, &five);
        c.on_result(&mut a, false, &five);
        assert_eq!(c.on_result(&mut a, true, &five), Next::Done);
        c.sticky = None;
        // 2 quarantined < 3: both listings of a are skipped.
        assert_eq!(c.begin(&five).unwrap().server(), ServerId(1));
    }

    /// The own zone comes first, each group shuffled; from Eureka 1.10.14 a new order at every
    /// 300 s resolve (every permutation of three turns up over many resolves), before it one
    /// order per host for good.
    #[test]
    fn endpoints_put_the_own_zone_first_and_reshuffle_by_version() {
        let mut rng = StreamFactory::new(4).stream("transport/test");
        let mut e = Endpoints::new(ids(&[7]), ids(&[1, 2, 3]), false);
        let mut seen = std::collections::HashSet::new();
        for k in 0..60 {
            let order = e
                .at(SimTime(k * SERVICE_URL_POLL_INTERVAL_MS), &mut rng)
                .to_vec();
            assert_eq!(order[0].server, ServerId(7));
            let mut rest = order[1..].to_vec();
            seen.insert(rest.clone());
            rest.sort();
            assert_eq!(rest, eps(&[1, 2, 3]));
        }
        assert_eq!(seen.len(), 6);
        let mut e = Endpoints::new(Vec::new(), ids(&[1, 2, 3]), true);
        let first = e.at(SimTime(0), &mut rng).to_vec();
        for k in 1..20 {
            assert_eq!(
                e.at(SimTime(k * SERVICE_URL_POLL_INTERVAL_MS), &mut rng),
                first
            );
        }
    }

    /// Pearson's statistic of `counts` against the probabilities `law`.
    fn chi_square(counts: &[u64], law: &[f64]) -> f64 {
        let n: u64 = counts.iter().sum();
        counts
            .iter()
            .zip(law)
            .map(|(&c, &p)| {
                let expected = n as f64 * p;
                (c as f64 - expected).powi(2) / expected
            })
            .sum()
    }

    /// The order `ResolverUtils#randomize` gives `[0, 1, 2]` on each of 10 000 hosts (each its
    /// own stream: up to 1.10.13 the seed is the host's IPv4 hash), as permutation counts in
    /// the order 012, 021, 102, 120, 201, 210, and first-pick counts.
    fn orders_of_10_000_hosts(fixed_per_host: bool) -> ([u64; 6], [u64; 3]) {
        let perms = [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ];
        let factory = StreamFactory::new(30);
        let (mut by_perm, mut by_first) = ([0u64; 6], [0u64; 3]);
        for host in 0..10_000 {
            let mut rng = factory.stream(&format!("resolver/host-{host}"));
            let mut e = Endpoints::new(Vec::new(), ids(&[0, 1, 2]), fixed_per_host);
            let order: Vec<u32> = e
                .at(SimTime(0), &mut rng)
                .iter()
                .map(|s| s.server.0)
                .collect();
            let k = perms
                .iter()
                .position(|p| p[..] == order[..])
                .expect("a permutation");
            by_perm[k] += 1;
            by_first[order[0] as usize] += 1;
        }
        (by_perm, by_first)
    }

    /// Up to Eureka 1.10.13 the first of three service URLs `[A, B, C]` is picked with
    /// probability 1/3, 1/2, 1/6 (the six equally likely draws of `randomize_up_to_1_10_13`:
    /// ABC and BAC twice each, BCA and CBA once, ACB and CAB never); from 1.10.14 each with
    /// 1/3 and every order with 1/6. Over 10 000 hosts Pearson's statistic stays under its
    /// 0.1 % critical value: with 2 degrees of freedom the chi-square survival is exp(-x/2),
    /// so x = 2 ln 1000 = 13.82; 3 and 5 degrees (the permutations): 16.27 and 20.52 (tables).
    /// The uniform law against the old one would give 10 000 x (0 + 1/36 / (1/2) + 1/36 /
    /// (1/6)) = 2 222 on the first picks.
    #[test]
    fn first_pick_of_three_follows_the_release_law() {
        let (perms, first) = orders_of_10_000_hosts(true);
        assert_eq!((perms[1], perms[4]), (0, 0), "ACB and CAB never: {perms:?}");
        let x = chi_square(&first, &[1.0 / 3.0, 1.0 / 2.0, 1.0 / 6.0]);
        assert!(x < 2.0 * 1000f64.ln(), "first picks {first:?}: {x:.2}");
        let seen = [perms[0], perms[2], perms[3], perms[5]];
        let x = chi_square(&seen, &[1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0, 1.0 / 6.0]);
        assert!(x < 16.27, "orders {perms:?}: {x:.2}");

        let (perms, first) = orders_of_10_000_hosts(false);
        let x = chi_square(&first, &[1.0 / 3.0; 3]);
        assert!(x < 2.0 * 1000f64.ln(), "first picks {first:?}: {x:.2}");
        let x = chi_square(&perms, &[1.0 / 6.0; 6]);
        assert!(x < 20.52, "orders {perms:?}: {x:.2}");
    }

    /// Up to 1.10.13 both zone groups are randomized from the same host seed (each call makes
    /// `new Random(LOCAL_IPV4_ADDRESS.hashCode())`): two groups of the same size come out in
    /// the same permutation.
    #[test]
    fn both_zone_groups_start_from_the_host_seed() {
        let factory = StreamFactory::new(8);
        for host in 0..50 {
            let mut rng = factory.stream(&format!("resolver/host-{host}"));
            let mut e = Endpoints::new(ids(&[0, 1, 2]), ids(&[10, 11, 12]), true);
            let order: Vec<u32> = e
                .at(SimTime(0), &mut rng)
                .iter()
                .map(|s| s.server.0)
                .collect();
            let own: Vec<u32> = order[..3].to_vec();
            let others: Vec<u32> = order[3..].iter().map(|s| s - 10).collect();
            assert_eq!(own, others, "host {host}");
        }
    }

    /// `AsyncResolver` resolves on its own timer, every 300 s from its warm-up, whoever calls:
    /// a list asked for at every 30 s and one asked for only now and then give the same order
    /// at the same instant, and the one asked for after a long quiet has drawn every resolve
    /// it missed (the next resolve is on the grid, not 300 s after the late call).
    #[test]
    fn endpoints_resolve_on_the_resolvers_timer_whoever_calls() {
        let fresh = || StreamFactory::new(11).stream("resolver/test");
        let (mut busy_rng, mut quiet_rng) = (fresh(), fresh());
        let mut busy = Endpoints::new(Vec::new(), ids(&[1, 2, 3, 4]), false);
        let mut quiet = busy.clone();
        quiet.at(SimTime(5), &mut quiet_rng);
        let mut by_instant = Vec::new();
        for k in 0..200 {
            let now = SimTime(5 + k * 30_000);
            by_instant.push((now, busy.at(now, &mut busy_rng).to_vec()));
        }
        for (now, order) in by_instant.iter().step_by(37) {
            assert_eq!(
                quiet.at(*now, &mut quiet_rng),
                order.as_slice(),
                "at {now:?}"
            );
        }
        // On the grid: the resolve after 5 + 19 x 300 s is due at 5 + 20 x 300 s.
        let late = SimTime(5 + 19 * SERVICE_URL_POLL_INTERVAL_MS + 299_000);
        let mut grid = Endpoints::new(Vec::new(), ids(&[1, 2, 3, 4]), false);
        let mut rng = fresh();
        grid.at(SimTime(5), &mut rng);
        grid.at(late, &mut rng);
        assert_eq!(
            grid.next_resolve,
            Some(SimTime(5 + 20 * SERVICE_URL_POLL_INTERVAL_MS))
        );
    }

    /// Sessions: the first call starts one; it lasts 1200 s x (1 + U - 0.5), in [600, 1800) s,
    /// and the call after that starts a new one with no sticky server.
    #[test]
    fn sessions_last_600_to_1800_s_and_forget_the_sticky_server() {
        let mut rng = StreamFactory::new(5).stream("transport/test");
        let mut s = Session::default();
        assert!(s.before_call(SimTime(42), &mut rng));
        let d = s.duration_ms();
        assert!((600_000..1_800_000).contains(&d), "{d}");
        s.client.sticky = Some(Endpoint {
            server: ServerId(2),
            nth: 0,
        });
        assert!(!s.before_call(SimTime(42 + d - 1), &mut rng));
        assert_eq!(s.client.sticky(), Some(ServerId(2)));
        assert!(s.before_call(SimTime(42 + d), &mut rng));
        assert_eq!(s.client.sticky(), None);
    }

    /// `ClientTransport`: the registration and query stacks stick to their servers apart; an
    /// unanswered attempt is retried on the next candidate under the same sequence number; a
    /// call unanswered three times fails (`RetryableEurekaHttpClient`, 3 attempts); an unknown
    /// sequence number is stale. Three servers in one zone, fixed per host, so the order is
    /// one draw and every step below follows from it.
    #[test]
    fn client_transport_retries_then_fails_and_keeps_stacks_apart() {
        let streams = TransportStreams::named(&StreamFactory::new(9), "p");
        let endpoints = Endpoints::new(ids(&[0, 1, 2]), Vec::new(), true);
        let mut t = ClientTransport::new(endpoints, TransportSettings::default(), streams);
        let renew = Call::Renew { last_dirty: 1 };
        let (first, seq) = t.begin(SimTime(0), renew).unwrap();
        assert_eq!(
            t.on_reply(SimTime(1), seq, &Reply::Renewed { found: true }),
            Delivery::Answered(first)
        );
        assert_eq!(t.sticky(Stack::Registration), Some(first));
        assert_eq!(t.sticky(Stack::Query), None);
        // The query stack starts from the same order, so its first pick is the same server.
        let (q, qseq) = t.begin(SimTime(2), Call::FetchDelta).unwrap();
        assert_eq!(q, first);
        // Three unanswered attempts, then the call fails.
        let Delivery::Retry(second, call, qseq) = t.on_reply(SimTime(3), qseq, &REFUSED) else {
            panic!("a retry");
        };
        assert_eq!(call, Call::FetchDelta);
        let Delivery::Retry(third, _, qseq) = t.on_reply(SimTime(4), qseq, &REFUSED) else {
            panic!("a retry");
        };
        assert_eq!(
            t.on_reply(SimTime(5), qseq, &REFUSED),
            Delivery::Failed(Call::FetchDelta)
        );
        // The query stack had no sticky server, so its first attempt was the first candidate;
        // the same call walks on through its candidates: every attempt a different server.
        assert_ne!(second, first);
        assert_ne!(third, first);
        assert_ne!(third, second);
        assert_eq!(t.sticky(Stack::Query), None);
        assert_eq!(t.sticky(Stack::Registration), Some(first));
        assert_eq!(
            t.on_reply(SimTime(6), 999, &Reply::Cancelled),
            Delivery::Stale
        );
    }

    /// The transport keys are read: `sessioned-client-reconnect-interval-seconds` = 60 gives
    /// sessions of 60 s x (1 + U - 0.5), in [30, 90) s; a quarantine percentage of 1.0 makes the
    /// threshold (int)(3 x 1.0) = 3, so with three endpoints a quarantined server is skipped.
    #[test]
    fn transport_settings_set_sessions_and_the_quarantine() {
        let settings = TransportSettings {
            poll_interval_ms: 10_000,
            session_ms: 60_000,
            quarantine_refresh_percentage: 1.0,
        };
        let mut rng = StreamFactory::new(6).stream("transport/test");
        let mut s = Session::new(settings);
        for k in 0..50 {
            s.before_call(SimTime(k * 100_000), &mut rng);
            assert!(
                (30_000..90_000).contains(&s.duration_ms()),
                "{}",
                s.duration_ms()
            );
        }
        let three = eps(&[0, 1, 2]);
        let mut c = RetryableClient::new(1.0);
        let mut a = c.begin(&three).unwrap();
        assert_eq!(c.on_result(&mut a, false, &three), Next::Retry(ServerId(1)));
        assert_eq!(c.on_result(&mut a, true, &three), Next::Done);
        c.sticky = None;
        assert_eq!(
            c.begin(&three).unwrap().server(),
            ServerId(1),
            "0 stays quarantined"
        );
    }
}
