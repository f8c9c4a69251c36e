//! The findings of issue 14's mutation fuzzer, each as the command that found it: every one must
//! now end with 0, 1 or 2 within seconds, never a panic (which `Test::run` checks) or an abort.

use super::test::Test;

/// `rate-per-s` at or below about 5e-7 (0 to 100 000 is allowed) drew a first request some
/// 2 * 10^9 ms ahead and ended `run`, `explain`, `compare` and `sweep` with "event queue key
/// overflow". A request that late never comes within the trial: the outcome is that of a
/// caller that sends nothing.
#[test]
fn rate_per_s_5e_7_ends_cleanly_in_every_command() {
    for rate in ["5e-7", "1e-300"] {
        let set = format!("caller[0].rate-per-s={rate}");
        Test::scenario("kill-9.toml").trials(2).set(&set).run();
        Test::new()
            .copy_bundled("kill-9.toml")
            .args(["explain", "kill-9.toml", "--set", &set])
            .run();
        Test::new()
            .copy_bundled("kill-9.toml")
            .args([
                "compare",
                "kill-9.toml",
                "--trials",
                "2",
                "--out",
                "out",
                "--set",
                &set,
            ])
            .run();
        Test::new()
            .copy_bundled("kill-9.toml")
            .args([
                "sweep",
                "kill-9.toml",
                "--trials",
                "2",
                "--out",
                "out",
                "--set",
                &set,
            ])
            .args([
                "--vary",
                "clients.ribbon.ServerListRefreshInterval=1000,2000",
            ])
            .run();
    }
}
