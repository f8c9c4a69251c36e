//! `TimedSupervisorTask` and the executor its runs are submitted to: the one-shot that
//! re-arms itself, backs off when a run times out and rejects a run while every thread is busy
//! (FACTS.md §5.2).

use super::{ClientOutput, ClientTimer, Task};

/// A task run by `TimedSupervisorTask` (FACTS.md §5.2, §0.3): a one-shot that re-arms itself
/// `delay` after its run ended. Each arm (and a cancel) starts a new generation, so a timer
/// armed before is stale when it fires.
///
/// With a transport (several servers, or faults) a call can outlast the interval, and the
/// supervisor's rules apply (`TimedSupervisorTask#run`): the run is submitted to the task's
/// executor and waited for `timeoutMillis` (the interval). Done in time: `delay` = the
/// interval, next run one delay after it ended. Timed out: `delay = min(maxDelay, delay x 2)`
/// (`maxDelay` = interval x `*-exponential-back-off-bound`), next run one delay after the
/// timeout, and `future.cancel(true)` interrupts a thread blocked in socket I/O, which a
/// blocking `java.net.Socket` ignores, so the body runs on to its end with its side effects
/// (a renew that lands, a fetch that is stored) but re-arms nothing. The executor
/// (`DiscoveryClient#initScheduledTasks`: `ThreadPoolExecutor(1, *-executor-thread-pool-size,
/// SynchronousQueue)`) runs at most that many bodies; a run submitted while all are busy is
/// rejected (`RejectedExecutionException`) and re-armed after the unchanged delay.
#[derive(Debug, Clone)]
pub(super) struct SupervisedTask {
    pub(super) task: Task,
    /// `timeoutMillis`: the interval, and the delay after a run done in time.
    pub(super) interval_ms: u64,
    /// `maxDelay`: interval x the back-off bound.
    pub(super) max_delay_ms: u64,
    /// The delay of the next arm.
    pub(super) delay_ms: u64,
    pub(super) generation: u32,
    /// The executor's threads (`*-executor-thread-pool-size`).
    pub(super) pool_size: usize,
    /// Bodies still running on the executor, with a transport only: the current run's and
    /// those whose supervisor timed out.
    pub(super) bodies: Vec<Body>,
    /// The current run's body (the sequence number of its call in flight), while the
    /// supervisor waits for it.
    pub(super) current: Option<u32>,
}

/// A task body on an executor thread: its call in flight, and `fetchRegistryGeneration` as it
/// read it before the call (`DiscoveryClient#getAndStoreFullRegistry`, `#getAndUpdateDelta`
/// store what they fetched only if no other thread stored a fetch since).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Body {
    pub(super) seq: u32,
    pub(super) fetch_generation: u64,
}

impl SupervisedTask {
    pub(super) fn new(
        task: Task,
        interval_ms: u64,
        back_off_bound: u32,
        pool_size: u32,
    ) -> SupervisedTask {
        SupervisedTask {
            task,
            interval_ms,
            max_delay_ms: interval_ms.saturating_mul(u64::from(back_off_bound)),
            delay_ms: interval_ms,
            generation: 0,
            pool_size: pool_size.max(1) as usize,
            bodies: Vec::new(),
            current: None,
        }
    }

    /// The run ended (or the task starts, or a run was rejected): the next one in one delay.
    #[inline]
    pub(super) fn arm(&mut self, out: &mut impl ClientOutput) {
        self.generation += 1;
        let (task, generation) = (self.task, self.generation);
        out.arm(self.delay_ms, ClientTimer::Task { task, generation });
    }

    /// Steady start: the next run `delay_ms` from now (a phase of the interval).
    pub(super) fn arm_in(&mut self, delay_ms: u64, out: &mut impl ClientOutput) {
        self.generation += 1;
        let (task, generation) = (self.task, self.generation);
        out.arm(delay_ms, ClientTimer::Task { task, generation });
    }

    /// The executor is shut down: the armed run never happens.
    pub(super) fn cancel(&mut self) {
        self.generation += 1;
    }

    pub(super) fn armed_with(&self, generation: u32) -> bool {
        self.generation == generation
    }

    /// Every thread of the executor runs a body: a submit is rejected.
    pub(super) fn saturated(&self) -> bool {
        self.bodies.len() >= self.pool_size
    }

    /// A run begins with call `seq`; the supervisor gives up on it one interval later
    /// (`arm_timeout`: unless that timer could only arrive after the run ended, when it is a
    /// no-op and is not armed; [`DiscoveryClient::calls_answered_in_time`](super::DiscoveryClient::calls_answered_in_time)).
    pub(super) fn begin(
        &mut self,
        seq: u32,
        fetch_generation: u64,
        arm_timeout: bool,
        out: &mut impl ClientOutput,
    ) {
        self.bodies.push(Body {
            seq,
            fetch_generation,
        });
        self.current = Some(seq);
        if arm_timeout {
            let (task, generation) = (self.task, self.generation);
            out.arm(
                self.interval_ms,
                ClientTimer::TaskTimeout { task, generation },
            );
        }
    }

    /// `future.get` timed out: back off; the body runs on, abandoned.
    pub(super) fn timed_out(&mut self, out: &mut impl ClientOutput) {
        self.delay_ms = self.max_delay_ms.min(self.delay_ms.saturating_mul(2));
        self.current = None;
        self.arm(out);
    }

    pub(super) fn body(&self, seq: u32) -> Option<Body> {
        self.bodies.iter().copied().find(|b| b.seq == seq)
    }

    /// The body whose call was `seq` goes on with call `next` (a retry on the next server, a
    /// re-register, a full fetch), which read `fetch_generation`.
    pub(super) fn goes_on(&mut self, seq: u32, next: u32, fetch_generation: u64) {
        if let Some(body) = self.bodies.iter_mut().find(|b| b.seq == seq) {
            *body = Body {
                seq: next,
                fetch_generation,
            };
        }
        if self.current == Some(seq) {
            self.current = Some(next);
        }
    }

    /// The body whose call was `seq` is over. If the supervisor still waited for it, the run
    /// was done in time: the delay is the interval again and the task re-arms.
    pub(super) fn ended(&mut self, seq: u32, out: &mut impl ClientOutput) {
        if self.ended_armed_ahead(seq) {
            self.arm(out);
        }
    }

    /// [`SupervisedTask::ended`] whose re-arm was done ahead, when the reply was handled
    /// ([`DiscoveryClient::renew_answered_ahead`](super::DiscoveryClient::renew_answered_ahead)): whether the run was done in time.
    pub(super) fn ended_armed_ahead(&mut self, seq: u32) -> bool {
        self.bodies.retain(|b| b.seq != seq);
        let in_time = self.current == Some(seq);
        if in_time {
            self.current = None;
            self.delay_ms = self.interval_ms;
        }
        in_time
    }
}
