//! `eureka-sim serve [SCENARIO] [--port N]`: the tuning page. A web server on 127.0.0.1 (axum on
//! a one-thread tokio runtime; the trials run on rayon's pool from tokio's blocking threads)
//! serving one self-contained page (`serve/page.html`, compiled in: no file and no external URL
//! is read) and its JSON API:
//!
//! - `GET /api/controls?SETTINGS`: the controls, their keys, values and the release's defaults;
//! - `GET /api/stream?SETTINGS`: the progressive run as server-sent events, one `snapshot` per
//!   chunk of trials (a quick estimate first), or one `problem`; a page that moves on closes
//!   the stream, and the run stops at its next chunk;
//! - `GET /api/results?SETTINGS`: the complete run's snapshot, at once;
//! - `GET /api/export?SETTINGS`: the scenario TOML and the `application.yml` snippets.
//!
//! SETTINGS is the page's query (`fetch=5&strategy=kill-15`, `experiment::tuning`). Everything
//! a request runs goes through the resource budget first (`--max-memory`, `--max-events`, and
//! a trial estimated longer than [`MAX_TRIAL_SECONDS`] is refused). Bad input gets a JSON
//! `{"error": ...}` and status 400; the server goes on. Ctrl-C stops it: the runs under way
//! stop at their next chunk, the server closes its socket and the command returns.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;

use crate::eureka::RequestMode;
use crate::experiment::TrialOutcome;
use crate::experiment::budget::{Estimate, Limits, check_outcomes};
use crate::experiment::tuning::{Progress, Tuned, chunks, first_chunk, tune};
use crate::report::tuning::{controls_json, error_json, export_json, snapshot_json};
use crate::scenario::{Scenario, ScenarioSource};

/// The page, with its script and style inline.
const PAGE: &str = include_str!("serve/page.html");

/// The scenario served without a SCENARIO argument: the bundled kill -9, compiled in.
const DEFAULT_SCENARIO: &str = include_str!("../../scenarios/kill-9.toml");

/// The first chunk of trials is sized to take about this long by the budget's estimate (an
/// upper bound: the first figures usually come sooner).
const FIRST_CHUNK_SECONDS: f64 = 0.2;

/// At most this many trials in the first chunk.
const FIRST_CHUNK_MAX: u32 = 50;

/// One trial estimated to take longer than this is refused: the page is for questions it can
/// answer while the user thinks; `eureka-sim run` (with `--shard`) is for the others.
pub(crate) const MAX_TRIAL_SECONDS: f64 = 60.0;

#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// The scenario file (TOML) whose settings the page starts from [default: the bundled
    /// scenarios/kill-9.toml].
    scenario: Option<PathBuf>,
    /// The port to listen on, on 127.0.0.1 (0: any free port; the address is printed).
    #[arg(long, default_value_t = 8080)]
    port: u16,
}

/// What every request reads.
struct App {
    source: ScenarioSource,
    /// The scenario as written.
    base: Scenario,
    limits: Limits,
    threads: usize,
    /// The baseline's outcomes by its `--set` assignments (trials and seed): every setting of
    /// one seed compares with the same baseline, run once.
    baselines: Mutex<HashMap<Vec<String>, Vec<TrialOutcome>>>,
    stopping: AtomicBool,
}

/// At most this many baselines are kept (each a few hundred bytes a trial).
const BASELINES_KEPT: usize = 8;

/// A request's problem: a message for the page, and the status it goes with.
struct Problem(StatusCode, String);

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        json_response(self.0, error_json(&self.1))
    }
}

fn bad_input(message: impl std::fmt::Display) -> Problem {
    Problem(StatusCode::BAD_REQUEST, message.to_string())
}

fn json_response(status: StatusCode, body: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

type Pairs = Result<Query<Vec<(String, String)>>, QueryRejection>;

fn pairs(query: Pairs) -> Result<Vec<(String, String)>, Problem> {
    query
        .map(|Query(p)| p)
        .map_err(|e| bad_input(format!("malformed query: {e}")))
}

impl App {
    fn tune(&self, pairs: &[(String, String)]) -> Result<Tuned, Problem> {
        tune(&self.source, &self.base, pairs).map_err(bad_input)
    }

    /// The budget of a setting's run (its trials and the baseline's): how many trials at once,
    /// or why it is refused.
    fn check_budget(&self, tuned: &Tuned) -> Result<usize, Problem> {
        let mode = RequestMode::Batched;
        let trials = u64::from(tuned.current.simulation.trials);
        let estimate = Estimate::new(&tuned.current, mode, 2 * trials, self.threads);
        let at_once = estimate.check(&self.limits).map_err(bad_input)?;
        let one = Estimate::new(&tuned.current, mode, 1, 1);
        if one.seconds() > MAX_TRIAL_SECONDS {
            return Err(bad_input(format!(
                "one trial of this setting would take up to {:.0} s ({}); the page runs \
                 settings whose trials take under {MAX_TRIAL_SECONDS:.0} s: use fewer instances \
                 or callers here, or `eureka-sim run` for this one",
                one.seconds(),
                one.describe(1)
            )));
        }
        Ok(at_once)
    }

    fn cached_baseline(&self, tuned: &Tuned) -> Vec<TrialOutcome> {
        let key = tuned.settings.baseline_overrides(&self.base);
        let cache = self.baselines.lock().unwrap_or_else(|p| p.into_inner());
        cache.get(&key).cloned().unwrap_or_default()
    }

    fn keep_baseline(&self, tuned: &Tuned, outcomes: &[TrialOutcome]) {
        let key = tuned.settings.baseline_overrides(&self.base);
        let mut cache = self.baselines.lock().unwrap_or_else(|p| p.into_inner());
        if cache.get(&key).is_some_and(|c| c.len() >= outcomes.len()) {
            return;
        }
        if cache.len() >= BASELINES_KEPT && !cache.contains_key(&key) {
            cache.clear();
        }
        cache.insert(key, outcomes.to_vec());
    }

    /// Runs `tuned` progressively, handing each snapshot to `send`; stops when `send` says the
    /// page moved on (false) or the server is stopping.
    fn progressive(
        &self,
        tuned: &Tuned,
        send: &mut dyn FnMut(String) -> bool,
    ) -> Result<(), Problem> {
        let at_once = self.check_budget(tuned)?;
        let mode = RequestMode::Batched;
        let total = tuned.current.simulation.trials;
        let per_trial = Estimate::new(&tuned.current, mode, 1, 1).seconds();
        // Both runs' trials, shared by the threads.
        let per_trial = 2.0 * per_trial / at_once as f64;
        let first = first_chunk(per_trial, FIRST_CHUNK_SECONDS, FIRST_CHUNK_MAX);
        let cached = self.cached_baseline(tuned);
        let pool = (at_once < self.threads)
            .then(|| rayon::ThreadPoolBuilder::new().num_threads(at_once).build())
            .transpose()
            .map_err(|e| Problem(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        let mut progress = Progress::default();
        for range in chunks(total, first) {
            if self.stopping.load(Ordering::Relaxed) {
                return Ok(());
            }
            let start = range.start as usize;
            let run = || progress.extend(tuned, range, mode, &cached);
            match &pool {
                Some(pool) => pool.install(run),
                None => run(),
            }
            check_outcomes(&progress.current[start..])
                .and_then(|()| check_outcomes(&progress.baseline[start..]))
                .map_err(|e| Problem(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
            if !send(snapshot_json(tuned, &progress, &self.source.source)) {
                return Ok(());
            }
        }
        self.keep_baseline(tuned, &progress.baseline);
        Ok(())
    }
}

type Shared = State<Arc<App>>;

async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        PAGE,
    )
        .into_response()
}

async fn controls(State(app): Shared, query: Pairs) -> Result<Response, Problem> {
    let tuned = app.tune(&pairs(query)?)?;
    Ok(json_response(
        StatusCode::OK,
        controls_json(&tuned, &app.base),
    ))
}

async fn export(State(app): Shared, query: Pairs) -> Result<Response, Problem> {
    let tuned = app.tune(&pairs(query)?)?;
    let json = export_json(&app.source, &app.base, &tuned).map_err(bad_input)?;
    Ok(json_response(StatusCode::OK, json))
}

/// The complete run at once (what the tests compare with `eureka-sim run`).
async fn results(State(app): Shared, query: Pairs) -> Result<Response, Problem> {
    let pairs = pairs(query)?;
    let work = tokio::task::spawn_blocking(move || {
        let tuned = app.tune(&pairs)?;
        let mut last = None;
        app.progressive(&tuned, &mut |json| {
            last = Some(json);
            true
        })?;
        last.ok_or_else(|| Problem(StatusCode::SERVICE_UNAVAILABLE, "stopping".to_string()))
    });
    let json = work
        .await
        .map_err(|e| Problem(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))??;
    Ok(json_response(StatusCode::OK, json))
}

/// The progressive run as server-sent events: `snapshot`s, or one `problem`.
async fn stream(State(app): Shared, query: Pairs) -> Response {
    let (tx, rx) = tokio::sync::mpsc::channel::<Event>(2);
    let problem = |message: &str| Event::default().event("problem").data(error_json(message));
    match pairs(query) {
        Err(Problem(_, message)) => {
            let _ = tx.try_send(problem(&message));
        }
        Ok(pairs) => {
            tokio::task::spawn_blocking(move || {
                let sent = app.tune(&pairs).and_then(|tuned| {
                    app.progressive(&tuned, &mut |json| {
                        tx.blocking_send(Event::default().event("snapshot").data(json))
                            .is_ok()
                    })
                });
                if let Err(Problem(_, message)) = sent {
                    let _ = tx.blocking_send(problem(&message));
                }
            });
        }
    }
    let events = ReceiverStream::new(rx).map(Ok::<_, Infallible>);
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

async fn not_found() -> Problem {
    Problem(
        StatusCode::NOT_FOUND,
        "no such page: the page is /, its API /api/controls, /api/stream, /api/results and \
         /api/export"
            .to_string(),
    )
}

fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/api/controls", get(controls))
        .route("/api/stream", get(stream))
        .route("/api/results", get(results))
        .route("/api/export", get(export))
        .fallback(not_found)
        .with_state(app)
}

/// The scenario the page starts from: the file, or the bundled kill -9.
fn read_source(path: Option<&PathBuf>) -> Result<ScenarioSource, crate::scenario::ScenarioError> {
    match path {
        Some(path) => ScenarioSource::read(path),
        None => Ok(ScenarioSource {
            source: "scenarios/kill-9.toml".to_string(),
            name: "kill-9".to_string(),
            text: DEFAULT_SCENARIO.to_string(),
            spring: Default::default(),
        }),
    }
}

pub(crate) fn serve(args: ServeArgs, budget: &super::budget::BudgetArgs) -> super::CommandResult {
    let source = read_source(args.scenario.as_ref())?;
    let base = super::load_source(&source, &[])?;
    // A scenario the page cannot tune is refused before the server starts.
    tune(&source, &base, &[]).map_err(|e| anyhow::anyhow!("{}: {e}", source.source))?;
    let app = Arc::new(App {
        source,
        base,
        limits: budget.limits(),
        threads: super::budget::pool_threads(),
        baselines: Mutex::new(HashMap::new()),
        stopping: AtomicBool::new(false),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .max_blocking_threads(8)
        .build()?;
    let served = runtime.block_on(listen(app, args.port));
    // A run under way ends at its next chunk; the command does not wait for it.
    runtime.shutdown_background();
    Ok(served?)
}

async fn listen(app: Arc<App>, port: u16) -> anyhow::Result<()> {
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| {
            format!(
                "cannot listen on {address}; choose another port with --port N (0: any free one)"
            )
        })?;
    let bound = listener.local_addr()?;
    // The stop is in place before the line that says Ctrl-C stops it: a Ctrl-C right after
    // the line (a script that reads it and stops the server) found none and exited 130.
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    super::interrupt::on_signal_stop(Box::new(move || {
        let _ = stop_tx.send(());
    }));
    println!(
        "eureka-sim serve: http://{bound}/ tunes {} ({}); Ctrl-C stops it",
        app.source.source, app.base.simulation.release
    );
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let stopped = Arc::new(tokio::sync::Notify::new());
    let app_for_stop = Arc::clone(&app);
    let notify = Arc::clone(&stopped);
    let shutdown = async move {
        let _ = stop_rx.await;
        app_for_stop.stopping.store(true, Ordering::Relaxed);
        notify.notify_one();
    };
    let server = axum::serve(listener, router(app)).with_graceful_shutdown(shutdown);
    // Open streams end at their run's next chunk; a page that holds a connection open longer
    // does not hold the command.
    let grace = async {
        stopped.notified().await;
        tokio::time::sleep(Duration::from_secs(2)).await;
    };
    tokio::select! {
        served = server => served?,
        () = grace => {}
    }
    eprintln!("eureka-sim serve: stopped");
    Ok(())
}
