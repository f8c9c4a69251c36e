//! `eureka-sim serve`: the page's figures are `eureka-sim run`'s for the same settings and
//! seed, bad input gets a message and the server goes on, Ctrl-C stops it, and a headless
//! Chromium moving the controls reads the CLI's percentiles from the page (skipped, saying so,
//! where Chromium and chromedriver are not installed).
//!
//! Every server here listens on 127.0.0.1 on a port the system picks (`--port 0`), read from
//! the address it prints.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{BIN, eureka_sim, kill9, ok, repo, temp};

/// A running `eureka-sim serve`, stopped when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .arg("serve")
            .args(args)
            .args(["--port", "0"])
            .current_dir(repo())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("eureka-sim serve starts");
        let mut line = String::new();
        let stdout = child.stdout.take().unwrap();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://127.0.0.1:"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .trim_end_matches('/')
            .to_string();
        Server { child, url }
    }

    fn get(&self, path: &str) -> (u16, String) {
        get(&format!("{}{path}", self.url))
    }

    fn json(&self, path: &str) -> (u16, Value) {
        let (status, body) = self.get(path);
        let json = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        (status, json)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(300)))
        .build()
        .into()
}

fn get(url: &str) -> (u16, String) {
    let mut response = agent()
        .get(url)
        .call()
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string().unwrap();
    (status, body)
}

/// `eureka-sim run kill-9.toml ARGS --format json`, parsed.
fn cli_summary(args: &[&str]) -> Value {
    let dir = temp();
    let out = dir.path().join("out");
    let mut all: Vec<String> = vec!["run".into(), kill9().display().to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    all.extend([
        "--format".into(),
        "json".into(),
        "--out".into(),
        out.display().to_string(),
    ]);
    serde_json::from_str(&ok(eureka_sim(dir.path(), 0, &all))).unwrap()
}

/// A fetch interval of 5 s and kill -15, 300 trials: as the page's query names them, and as a
/// user would write them on the command line, by hand.
const FETCH_5_KILL_15: (&str, &[&str]) = (
    "fetch=5&strategy=kill-15&trials=300",
    &[
        "--set",
        "caller[0].eureka.client.registry-fetch-interval-seconds=5",
        "--set",
        "shutdown[0].strategy=kill-15",
        "--trials",
        "300",
    ],
);

fn exposure(summary: &Value) -> &Value {
    summary["shutdowns"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "exposure_ms")
        .unwrap()
}

#[test]
fn the_pages_figures_are_the_clis_for_the_same_settings_and_seed() {
    let server = Server::start(&["scenarios/kill-9.toml"]);
    // The settings as the page names them; the CLI's as a user would write them, by hand.
    let cases: [(&str, &[&str]); 2] = [
        FETCH_5_KILL_15,
        (
            "cache-update=5000&lease-renewal=10&ribbon-refresh=5000&instances=30&seed=3&trials=60",
            &[
                "--set",
                "server.eureka.server.response-cache-update-interval-ms=5000",
                "--set",
                "app[0].eureka.instance.lease-renewal-interval-in-seconds=10",
                "--set",
                "caller[0].ribbon.ServerListRefreshInterval=5000",
                "--set",
                "app[0].instances=30",
                "--seed",
                "3",
                "--trials",
                "60",
            ],
        ),
    ];
    for (query, args) in cases {
        let (status, page) = server.json(&format!("/api/results?{query}"));
        assert_eq!(status, 200, "{page}");
        let cli = cli_summary(args);
        assert_eq!(page["summary"], cli, "{query}");
        assert_eq!(page["complete"], true);
        // The figures the page shows are those of summary.json.
        let shown = &page["current"]["exposure"];
        assert_eq!(shown["p50"]["value"], exposure(&cli)["p50"], "{query}");
        assert_eq!(shown["p99"]["value"], exposure(&cli)["p99"], "{query}");
    }
}

#[test]
fn the_baseline_is_the_scenario_as_written_on_the_same_seeds() {
    let server = Server::start(&["scenarios/kill-9.toml"]);
    let (_, page) = server.json("/api/results?fetch=5&trials=40&seed=2");
    let cli = cli_summary(&["--trials", "40", "--seed", "2"]);
    assert_eq!(
        page["baseline"]["exposure"]["p50"]["value"],
        exposure(&cli)["p50"]
    );
    assert_eq!(page["baseline"]["exposure"]["mean"], exposure(&cli)["mean"]);
}

#[test]
fn the_stream_sends_a_quick_estimate_first_then_every_trial() {
    let server = Server::start(&[]);
    let (status, body) = server.get("/api/stream?trials=400");
    assert_eq!(status, 200);
    // An event's data lines, joined by newlines, up to the blank line that ends it.
    let snapshots: Vec<Value> = body
        .split("\n\n")
        .filter(|event| event.starts_with("event: snapshot"))
        .map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            serde_json::from_str(&data.join("\n")).unwrap()
        })
        .collect();
    assert!(snapshots.len() >= 2, "{body:.300}");
    let done: Vec<u64> = snapshots
        .iter()
        .map(|s| s["done"].as_u64().unwrap())
        .collect();
    assert!(done.windows(2).all(|w| w[0] < w[1]), "{done:?}");
    assert_eq!(*done.last().unwrap(), 400);
    assert!(done[0] < 400);
    assert_eq!(snapshots.last().unwrap()["complete"], true);
    assert_eq!(snapshots[0]["complete"], false);
}

#[test]
fn bad_input_gets_a_message_and_the_server_goes_on() {
    let server = Server::start(&["scenarios/kill-9.toml"]);
    let cases = [
        ("/api/results?fetch=five", "`five` is not a whole number"),
        ("/api/results?fetch=0", "allowed: an integer in 1..=86400"),
        ("/api/results?fetchh=5", "unknown setting `fetchh`"),
        ("/api/controls?%zz=%%", "unknown setting"),
        (
            "/api/results?instances=100000",
            "allowed: an integer in 1..=10000",
        ),
        (
            "/api/export?strategy=kill-8",
            "one of kill-9, kill-15, pause, service-registry",
        ),
        ("/api/results?lb-ttl=5000", "its callers use Ribbon"),
        ("/api/results?trials=100000000", "simulation.trials"),
    ];
    for (path, message) in cases {
        let (status, json) = server.json(path);
        assert_eq!(status, 400, "{path}: {json}");
        let error = json["error"].as_str().unwrap();
        assert!(error.contains(message), "{path}: {error}");
    }
    // The stream says it as its one event.
    let (_, body) = server.get("/api/stream?fetch=0");
    assert!(body.contains("event: problem"), "{body}");
    let (status, _) = server.get("/nowhere");
    assert_eq!(status, 404);
    // Still serving.
    let (status, page) = server.get("/");
    assert_eq!(status, 200);
    assert!(page.contains("<title>eureka-sim: tuning</title>"));
}

#[test]
fn the_budget_refuses_a_setting_too_big_for_the_page() {
    // 52 MB leaves room for the 32 MB base and about one trial of 4 000 instances
    // (experiment::budget), not of 10 000.
    let server = Server::start(&["scenarios/kill-9.toml", "--max-memory", "52M"]);
    let (status, json) = server.json("/api/results?instances=10000");
    assert_eq!(status, 400, "{json}");
    let error = json["error"].as_str().unwrap();
    assert!(error.contains("--max-memory"), "{error}");
    let (status, _) = server.json("/api/controls");
    assert_eq!(status, 200);
}

#[test]
fn the_page_is_self_contained() {
    let server = Server::start(&[]);
    let (status, page) = server.get("/");
    assert_eq!(status, 200);
    // No script, style, image or font from elsewhere: the only absolute URL is SVG's namespace.
    let without_namespace = page.replace("http://www.w3.org/2000/svg", "");
    for word in ["http://", "https://", "//cdn", "src=\"/", "@import"] {
        assert!(!without_namespace.contains(word), "{word}");
    }
    let (_, snapshot) = server.json("/api/results?trials=20");
    for svg in ["cdf_svg", "timeline_svg"] {
        let text = snapshot[svg].as_str().unwrap();
        assert!(
            !text
                .replace("http://www.w3.org/2000/svg", "")
                .contains("http")
        );
    }
}

#[test]
fn the_export_writes_the_settings_and_the_snippets() {
    let server = Server::start(&["scenarios/kill-9.toml"]);
    let (status, json) = server.json("/api/export?fetch=5&strategy=kill-15");
    assert_eq!(status, 200, "{json}");
    assert_eq!(json["query"], "fetch=5&strategy=kill-15");
    let toml = json["toml"].as_str().unwrap();
    assert!(toml.contains("strategy = \"kill-15\""), "{toml}");
    // The exported scenario runs to the page's figures.
    let dir = temp();
    let path = dir.path().join("kill-9.toml");
    std::fs::write(&path, toml).unwrap();
    let out = dir.path().join("out");
    let args = [
        "run",
        path.to_str().unwrap(),
        "--trials",
        "30",
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ];
    let from_file: Value = serde_json::from_str(&ok(eureka_sim(dir.path(), 0, &args))).unwrap();
    let (_, page) = server.json("/api/results?fetch=5&strategy=kill-15&trials=30");
    assert_eq!(exposure(&page["summary"]), exposure(&from_file));
    let callers = &json["snippets"][2];
    assert_eq!(callers["role"], "callers");
    assert!(
        callers["yaml"]
            .as_str()
            .unwrap()
            .contains("registry-fetch-interval-seconds: 5")
    );
}

#[test]
fn ctrl_c_stops_the_server() {
    let mut server = Server::start(&[]);
    let pid = server.child.id().to_string();
    let status = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(status.success());
    let start = Instant::now();
    let exit = loop {
        if let Some(exit) = server.child.try_wait().unwrap() {
            break exit;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "still running after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exit.success(), "{exit:?}");
    let mut stderr = String::new();
    use std::io::Read;
    server
        .child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.contains("stopped"), "{stderr}");
}

/// The headless browser's flags: nothing fetched from anywhere but the page's server.
const CHROMIUM_FLAGS: [&str; 9] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,2000",
];

/// The first of `names` on PATH (or as an absolute path).
fn which(names: &[&str]) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        let direct = Path::new(name);
        if direct.is_absolute() && direct.exists() {
            return Some(direct.to_path_buf());
        }
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.exists())
    })
}

/// A free port on 127.0.0.1, outside the ranges the real-stack rig uses.
fn free_port() -> u16 {
    loop {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        if !(8761..=8770).contains(&port) && !(9100..=9110).contains(&port) {
            return port;
        }
    }
}

/// A WebDriver session on chromedriver (the W3C protocol: JSON over HTTP).
struct Browser {
    driver: Child,
    base: String,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn start(chromium: &Path, chromedriver: &Path) -> Browser {
        let port = free_port();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let root = format!("http://127.0.0.1:{port}");
        let start = Instant::now();
        while get_json(&format!("{root}/status")).is_none() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "chromedriver does not answer"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let profile = temp();
        let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|s| s.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args}
        }}});
        let session = post(&format!("{root}/session"), &capabilities);
        let id = session["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {session}"))
            .to_string();
        Browser {
            driver,
            base: format!("{root}/session/{id}"),
            _profile: profile,
        }
    }

    fn command(&self, path: &str, body: &Value) -> Value {
        let reply = post(&format!("{}{path}", self.base), body);
        assert!(reply["value"].get("error").is_none(), "{path}: {reply}");
        reply["value"].clone()
    }

    fn element(&self, css: &str) -> String {
        let found = self.command("/element", &json!({"using": "css selector", "value": css}));
        found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{css}: {found}"))
            .to_string()
    }

    fn attribute(&self, css: &str, name: &str) -> String {
        let element = self.element(css);
        let url = format!("{}/element/{element}/attribute/{name}", self.base);
        get_json(&url).map_or(String::new(), |v| {
            v["value"].as_str().unwrap_or("").to_string()
        })
    }

    fn text(&self, css: &str) -> String {
        let element = self.element(css);
        let url = format!("{}/element/{element}/text", self.base);
        get_json(&url).map_or(String::new(), |v| {
            v["value"].as_str().unwrap_or("").to_string()
        })
    }

    /// Waits until the page shows the complete run of `query`.
    fn wait_complete(&self, query: &str) {
        let start = Instant::now();
        loop {
            let complete = self.attribute("#status", "data-complete") == "true";
            if complete && self.attribute("#status", "data-query") == query {
                return;
            }
            let error = self.text("#error");
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "the page did not complete {query} (error: {error})"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = agent().delete(&self.base).call();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn post(url: &str, body: &Value) -> Value {
    let mut response = agent()
        .post(url)
        .send_json(body)
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    response.body_mut().read_json().unwrap()
}

fn get_json(url: &str) -> Option<Value> {
    let mut response = agent().get(url).call().ok()?;
    response.body_mut().read_json().ok()
}

/// Standard base64 (the screenshot WebDriver returns), without a crate for 20 lines.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let sextets: Vec<u8> = text.bytes().filter_map(value).collect();
    sextets
        .chunks(4)
        .flat_map(|c| {
            let n = c.iter().fold(0u32, |n, &s| (n << 6) | u32::from(s)) << (6 * (4 - c.len()));
            let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            bytes.into_iter().take(c.len().saturating_sub(1))
        })
        .collect()
}

#[test]
fn base64_decodes_the_rfc_4648_vectors() {
    for (text, plain) in [
        ("", ""),
        ("Zg==", "f"),
        ("Zm8=", "fo"),
        ("Zm9v", "foo"),
        ("Zm9vYg==", "foob"),
        ("Zm9vYmE=", "fooba"),
        ("Zm9vYmFy", "foobar"),
    ] {
        assert_eq!(base64_decode(text), plain.as_bytes());
    }
}

#[test]
fn headless_chromium_moves_the_controls_and_reads_the_clis_percentiles() {
    let (Some(chromium), Some(chromedriver)) = (
        which(&["chromium", "chromium-browser", "/usr/bin/chromium"]),
        which(&["chromedriver", "/usr/bin/chromedriver"]),
    ) else {
        println!(
            "skipped: headless_chromium_moves_the_controls... needs chromium and chromedriver \
             (apt-get install chromium chromium-driver)"
        );
        return;
    };
    let server = Server::start(&["scenarios/kill-9.toml"]);
    let browser = Browser::start(&chromium, &chromedriver);
    // p99 needs 299 trials: the link sets 300.
    browser.command(
        "/url",
        &json!({"url": format!("{}/?trials=300", server.url)}),
    );
    browser.wait_complete("trials=300");
    // Move the fetch-interval slider from 30 s to 5 s with the keyboard, as a user would.
    let slider = browser.element("#input-fetch");
    let left = "\u{E012}".repeat(25);
    browser.command(&format!("/element/{slider}/value"), &json!({"text": left}));
    let option = browser.element("#input-strategy option[value='kill-15']");
    browser.command(&format!("/element/{option}/click"), &json!({}));
    let (query, args) = FETCH_5_KILL_15;
    browser.wait_complete(query);
    let p50 = browser.attribute("#exposure-p50-current", "data-value");
    let p99 = browser.attribute("#exposure-p99-current", "data-value");
    let cli = cli_summary(args);
    assert_eq!(p50, exposure(&cli)["p50"].to_string());
    assert_eq!(p99, exposure(&cli)["p99"].to_string());
    // The screenshot, for people.
    let png = get_json(&format!("{}/screenshot", browser.base)).unwrap();
    let png = base64_decode(png["value"].as_str().unwrap());
    assert!(png.starts_with(b"\x89PNG"));
    // Cargo's scratch folder for integration tests: the target folder wherever CARGO_TARGET_DIR
    // puts it (a clone's own `target/` may not exist).
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-page.png");
    std::fs::write(&path, png).unwrap();
    println!("screenshot of the page: {}", path.display());
}
