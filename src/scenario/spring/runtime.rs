//! The property sources Spring adds at run time, made deterministic: a run never depends on the
//! machine, the clock or chance outside the scenario's seed.
//!
//! - `random.*`: Spring Boot's `RandomValuePropertySource#getRandomValue` (Boot 2.4+ ranges):
//!   `random.int` and `random.long` any value, `random.int(n)` / `random.int[n]` in `[0, n)`,
//!   `random.int(a,b)` / `random.int[a,b]` in `[a, b)` (`long` alike), `random.uuid` a version 4
//!   UUID, and anything else (`random.value`) 32 hex digits (`md5DigestAsHex` of random bytes).
//!   Spring draws a new value at every lookup from a `java.util.Random` seeded by the clock;
//!   here each instance of a table draws from its own stream of the scenario's seed
//!   (`spring/random/<table>/<instance>`), so values differ between instances and are the same
//!   for the same seed.
//! - `spring.cloud.client.hostname` and `spring.cloud.client.ip-address`: spring-cloud-commons'
//!   `HostInfoEnvironmentPostProcessor` (the machine's first non-loopback address and its host
//!   name, `InetUtils#findFirstNonLoopbackHostInfo`). Here the instance's name in the
//!   simulation (`svc-0`) and a private address from the table's place and the instance's
//!   index (`10.<table>.<hi>.<lo>`).
//! - `server.port`: unset, the web server listens on 8080 (`ServerProperties#port`, Tomcat's
//!   default), the port Eureka registers (`EurekaClientAutoConfiguration#eurekaInstanceConfigBean`
//!   reads `server.port` with 8080 as its default); a placeholder naming it gets that.

use crate::engine::{RngStream, StreamFactory};

/// The port a Spring Boot web server takes when `server.port` is unset.
pub(super) const DEFAULT_SERVER_PORT: &str = "8080";

/// Who the process is, for the run-time sources.
#[derive(Debug, Clone)]
pub(in crate::scenario) struct Runtime {
    seed: u64,
    /// The table's label (`app[0]`): names the random streams.
    table: String,
    /// The table's place among the scenario's tables (the address's second byte).
    ordinal: usize,
    /// The process's name; instance `k` of a numbered table is `name-k`.
    name: String,
    numbered: bool,
}

impl Runtime {
    pub(in crate::scenario) fn new(
        seed: u64,
        table: &str,
        ordinal: usize,
        numbered: bool,
    ) -> Runtime {
        Runtime {
            seed,
            table: table.to_string(),
            ordinal,
            name: table.replace(['[', ']'], "").replace('.', "-"),
            numbered,
        }
    }

    /// Names the process (once its name is known).
    pub(in crate::scenario) fn named(mut self, name: &str) -> Runtime {
        self.name = name.to_string();
        self
    }

    #[cfg(test)]
    pub(super) fn for_tests() -> Runtime {
        Runtime::new(1, "app[0]", 0, true).named("svc")
    }

    /// The random stream of instance `instance`.
    pub(super) fn stream(&self, instance: usize) -> RngStream {
        let k = instance.to_string();
        StreamFactory::new(self.seed).stream_of(&["spring/random/", &self.table, "/", &k])
    }

    /// `spring.cloud.client.hostname` of instance `instance`.
    pub(super) fn hostname(&self, instance: usize) -> String {
        if self.numbered {
            format!("{}-{instance}", self.name)
        } else {
            self.name.clone()
        }
    }

    /// `spring.cloud.client.ip-address` of instance `instance`.
    pub(super) fn ip_address(&self, instance: usize) -> String {
        format!(
            "10.{}.{}.{}",
            self.ordinal % 256,
            (instance / 254) % 256,
            instance % 254 + 1
        )
    }
}

/// `RandomValuePropertySource#getRandomValue(type)` for `type` (the name after `random.`),
/// drawn from `stream`; `Err` where Spring throws.
pub(super) fn random_value(kind: &str, stream: &mut RngStream) -> Result<String, String> {
    match kind {
        "int" => return Ok((stream.next_u64() as u32 as i32).to_string()),
        "long" => return Ok((stream.next_u64() as i64).to_string()),
        "uuid" => return Ok(uuid(stream)),
        _ => {}
    }
    for (prefix, max) in [("int", i64::from(i32::MAX)), ("long", i64::MAX)] {
        if let Some(range) = range_of(kind, prefix) {
            let (lo, hi) = parse_range(range, max).map_err(|why| {
                format!(
                    "`random.{kind}`: {why}; Spring would fail (RandomValuePropertySource); \
                     allowed: random.{prefix}(max) with max > 0, or random.{prefix}[min,max] \
                     with min < max"
                )
            })?;
            let span = u64::try_from(i128::from(hi) - i128::from(lo)).unwrap_or(u64::MAX);
            let drawn = stream.below(span);
            return Ok((i128::from(lo) + i128::from(drawn)).to_string());
        }
    }
    Ok(format!(
        "{:016x}{:016x}",
        stream.next_u64(),
        stream.next_u64()
    ))
}

/// `getRange`: the text between the brackets after `prefix` (`int(10)`, `int[1,5]`).
fn range_of<'a>(kind: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = kind.strip_prefix(prefix)?;
    (rest.len() >= 2).then(|| &rest[1..rest.len() - 1])
}

/// `Range.of`: `max` (from 0) or `min,max`; min < max, both within the type.
fn parse_range(text: &str, max: i64) -> Result<(i64, i64), String> {
    let number = |t: &str| {
        t.trim()
            .parse::<i64>()
            .ok()
            .filter(|n| n.checked_abs().is_some_and(|a| a <= max))
            .ok_or_else(|| format!("`{}` is not a number of the type", t.trim()))
    };
    let (lo, hi) = match text.split_once(',') {
        Some((a, b)) => (number(a)?, number(b)?),
        None => (0, number(text)?),
    };
    if hi <= lo {
        return Err(format!("the bound {hi} is not above {lo}"));
    }
    Ok((lo, hi))
}

/// A version 4 UUID from 128 random bits (`UUID#randomUUID`'s layout).
fn uuid(stream: &mut RngStream) -> String {
    let hi = (stream.next_u64() & !0xF000) | 0x4000;
    let lo = (stream.next_u64() & !(0b11 << 62)) | (0b10 << 62);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xFFFF,
        hi & 0xFFFF,
        lo >> 48,
        lo & 0xFFFF_FFFF_FFFF
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(kind: &str) -> Vec<String> {
        let mut s = Runtime::for_tests().stream(0);
        (0..200)
            .map(|_| random_value(kind, &mut s).unwrap())
            .collect()
    }

    /// Ranges hold as `RandomValuePropertySource` documents them: `(n)` is `[0, n)`, `[a,b]` is
    /// `[a, b)`; both bracket shapes read alike.
    #[test]
    fn random_ranges_follow_spring() {
        let in_range = |kind: &str, lo: i64, hi: i64| {
            let values: Vec<i64> = draw(kind).iter().map(|v| v.parse().unwrap()).collect();
            assert!(
                values.iter().all(|v| (lo..hi).contains(v)),
                "{kind}: {values:?}"
            );
            // 200 draws of at most 10 values see every one (the chance of missing one is
            // below 10 * 0.9^200 = 7e-9).
            if hi - lo <= 10 {
                for v in lo..hi {
                    assert!(values.contains(&v), "{kind} never gave {v}");
                }
            }
        };
        in_range("int(10)", 0, 10);
        in_range("int[10]", 0, 10);
        in_range("int[5,10]", 5, 10);
        in_range("int(-3,2)", -3, 2);
        in_range(
            "long[1000000000000,1000000000005]",
            1_000_000_000_000,
            1_000_000_000_005,
        );
        let mut s = Runtime::for_tests().stream(0);
        for bad in ["int(0)", "int[5,5]", "int[x]", "long(1,0)"] {
            let err = random_value(bad, &mut s).unwrap_err();
            assert!(err.contains("Spring would fail"), "{bad}: {err}");
        }
    }

    /// `random.value` is 32 hex digits, `random.uuid` a version 4 UUID; values are new at each
    /// draw, and the same for the same seed and instance.
    #[test]
    fn random_values_have_spring_shapes_and_repeat_by_seed() {
        let values = draw("value");
        assert!(
            values
                .iter()
                .all(|v| v.len() == 32 && v.chars().all(|c| c.is_ascii_hexdigit()))
        );
        assert_ne!(values[0], values[1]);
        let uuid = &draw("uuid")[0];
        let parts: Vec<&str> = uuid.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'), "{uuid}");
        assert!(matches!(&parts[3][..1], "8" | "9" | "a" | "b"), "{uuid}");
        assert_eq!(draw("value"), values);
        let other = Runtime::new(2, "app[0]", 0, true).stream(0);
        let mut other = other;
        assert_ne!(random_value("value", &mut other).unwrap(), values[0]);
        assert!(draw("int").iter().all(|v| v.parse::<i32>().is_ok()));
        assert!(draw("long").iter().all(|v| v.parse::<i64>().is_ok()));
    }

    #[test]
    fn host_info_is_the_instance_in_the_simulation() {
        let r = Runtime::for_tests();
        assert_eq!(r.hostname(3), "svc-3");
        assert_eq!(r.ip_address(0), "10.0.0.1");
        assert_eq!(r.ip_address(254), "10.0.1.1");
        let caller = Runtime::new(1, "caller[0]", 5, false).named("gateway");
        assert_eq!(
            (caller.hostname(0), caller.ip_address(0)),
            ("gateway".to_string(), "10.5.0.1".to_string())
        );
    }
}
