//! What a team's Spring file shows about the stack it runs on, for `init`: the release train
//! its keys fit and the caller's HTTP stack, each with the key that shows it.

use super::{Format, SpringFile, documents};
use crate::scenario::keys::canonical;

/// What `init` takes from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEvidence {
    /// `spring.application.name` of the documents without a profile condition, if written
    /// without placeholders.
    pub application_name: Option<String>,
    /// The oldest release train the keys fit, and why (`None`: nothing tells).
    pub train: Option<(&'static str, String)>,
    /// The caller's HTTP stack the keys show (`gateway`, `zuul`), and why.
    pub http_client: Option<(&'static str, String)>,
}

/// Reads `text` (a file named `name`) for [`FileEvidence`].
///
/// - Ribbon, Hystrix and Zuul keys (`ribbon.*`, `<client>.ribbon.*`, `zuul.*`, `hystrix.*`):
///   spring-cloud-netflix removed them in 2020.0, so the train is Hoxton at the newest.
/// - `spring.config.activate.on-profile` or `spring.config.import`: Spring Boot 2.4+, whose
///   first train is 2020.0 (spring-cloud-release `v2020.0.0` pins Boot 2.4).
/// - `spring.cloud.gateway.*`: a Spring Cloud Gateway caller; without Ribbon keys it balances
///   with Spring Cloud LoadBalancer, as from 2020.0.
pub fn file_evidence(name: &str, text: &str) -> Result<FileEvidence, String> {
    let format = Format::of(name).ok_or_else(|| {
        format!("`{name}` is neither YAML (.yml, .yaml) nor properties (.properties)")
    })?;
    let file = SpringFile {
        display: name.to_string(),
        written: name.to_string(),
        format,
        text: text.to_string(),
    };
    let docs = documents(&file).map_err(|p| format!("{}:{}: {}", p.file, p.line, p.message))?;
    let all: Vec<(String, &super::Property)> = docs
        .iter()
        .flat_map(|d| &d.properties)
        .map(|p| (canonical(&p.name), p))
        .collect();
    let find = |test: &dyn Fn(&str) -> bool| all.iter().find(|(k, _)| test(k)).map(|(_, p)| *p);
    let at = |p: &super::Property| format!("{} line {}: `{}`", name, p.line, p.name);
    let netflix = find(&|k| {
        k.starts_with("ribbon.")
            || k.contains(".ribbon.")
            || k.starts_with("zuul.")
            || k.starts_with("hystrix.")
    });
    let boot24 = find(&|k| {
        k.starts_with("spring.config.activate.") || k.starts_with("spring.config.import")
    });
    let gateway = find(&|k| k.starts_with("spring.cloud.gateway."));
    let zuul = find(&|k| k.starts_with("zuul."));
    let train = match (netflix, boot24.or(gateway)) {
        (Some(n), _) => Some((
            "Hoxton",
            format!("{} (Ribbon/Hystrix/Zuul, removed in 2020.0)", at(n)),
        )),
        (None, Some(p)) => Some((
            "2020.0",
            format!(
                "{} (Spring Boot 2.4+ or Gateway on LoadBalancer: 2020.0 is the oldest train \
                 that fits)",
                at(p)
            ),
        )),
        (None, None) => None,
    };
    let http_client = gateway
        .map(|p| ("gateway", at(p)))
        .or_else(|| zuul.map(|p| ("zuul", at(p))));
    let application_name = docs
        .iter()
        .filter(|d| {
            !d.properties.iter().any(|p| {
                let k = canonical(&p.name);
                k.starts_with("spring.config.activate.")
                    || k.starts_with("spring.profiles[")
                    || k == "spring.profiles"
            })
        })
        .flat_map(|d| &d.properties)
        .rfind(|p| canonical(&p.name) == "spring.application.name")
        .map(|p| p.value.clone())
        .filter(|v| !v.contains("${") && !v.is_empty());
    Ok(FileEvidence {
        application_name,
        train,
        http_client,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gateway_file_shows_gateway_on_2020() {
        let e = file_evidence(
            "gw.yml",
            "spring:\n  application:\n    name: gateway\n  cloud:\n    gateway:\n      routes:\n        - id: svc\n          uri: lb://svc\n",
        )
        .unwrap();
        assert_eq!(e.application_name.as_deref(), Some("gateway"));
        assert_eq!(e.train.unwrap().0, "2020.0");
        assert_eq!(e.http_client.unwrap().0, "gateway");
    }

    #[test]
    fn ribbon_and_zuul_keys_show_hoxton() {
        let e = file_evidence(
            "zuul.properties",
            "zuul.routes.svc.path=/svc/**\nsvc.ribbon.ServerListRefreshInterval=5000\n",
        )
        .unwrap();
        let (train, why) = e.train.unwrap();
        assert_eq!(train, "Hoxton");
        assert!(why.contains("zuul.properties line 1"), "{why}");
        assert_eq!(e.http_client.unwrap().0, "zuul");
        assert_eq!(e.application_name, None);
        let plain = file_evidence("a.yml", "server.port: 8080\n").unwrap();
        assert_eq!((plain.train, plain.http_client), (None, None));
    }
}
