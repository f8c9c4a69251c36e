//! What a team's Spring file shows about the stack it runs on, for `init`: the release train
//! its keys fit and the caller's HTTP stack, each with the key that shows it.

use super::{
    Document, Format, Request, Runtime, SpringFile, conditions_of, documents, environment, profiles,
};
use crate::scenario::keys::canonical;

/// Spring file `name` (its `text`) and its documents, read as it stands; an error names the
/// file and the line where it cannot be read, or a name that is neither YAML nor properties.
fn read_documents(name: &str, text: &str) -> Result<(SpringFile, Vec<Document>), String> {
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
    Ok((file, docs))
}

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
    /// Where the file configures a Eureka server (an `eureka.server.*` key).
    pub eureka_server: Option<String>,
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
    let (_, docs) = read_documents(name, text)?;
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
    let eureka_server = find(&|k| k.starts_with("eureka.server.")).map(at);
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
        eureka_server,
    })
}

/// What one profile document of a shared server file says of its peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileDocument {
    /// The line of the document's profile condition.
    pub line: usize,
    /// `eureka.instance.hostname` with the profile active.
    pub hostname: Option<String>,
    /// `eureka.instance.metadata-map.zone` (Spring Cloud's zone of an instance).
    pub zone: Option<String>,
    /// `eureka.client.service-url.defaultZone`.
    pub service_url: Option<String>,
}

/// The document of `profile` in file `name` (its `text`), read with that profile active as
/// Spring reads it; an error naming the file's profiles when it has none for `profile`.
pub fn profile_document(name: &str, text: &str, profile: &str) -> Result<ProfileDocument, String> {
    let (file, docs) = read_documents(name, text)?;
    let active = [profile.to_string()];
    let mut listed = Vec::new();
    let mut line = None;
    for doc in &docs {
        for c in conditions_of(doc)
            .iter()
            .filter(|c| c.name != super::ON_CLOUD_PLATFORM)
        {
            listed.push(c.value.clone());
            if line.is_none() && profiles::matches(&c.value, &active).unwrap_or(false) {
                line = Some(c.line);
            }
        }
    }
    let line = line.ok_or_else(|| {
        format!(
            "{name} has no document for profile `{profile}` (its profile documents: {}); name \
             the profiles of its spring.config.activate.on-profile or spring.profiles",
            if listed.is_empty() {
                "none".to_string()
            } else {
                listed.join(", ")
            }
        )
    })?;
    let request = Request {
        files: vec![file],
        env: Vec::new(),
        profiles: Some(active.to_vec()),
        runtime: Runtime::new(1, "peer", 0, false).named(profile),
        import: &|_, _, _, _| Ok(None),
    };
    let env = environment(&request).map_err(|p| format!("{}:{}: {}", p.file, p.line, p.message))?;
    let value = |key: &str| {
        env.value(key, 0)
            .and_then(Result::ok)
            .filter(|v| !v.is_empty())
    };
    Ok(ProfileDocument {
        line,
        hostname: value("eureka.instance.hostname"),
        zone: value("eureka.instance.metadata-map.zone"),
        service_url: value("eureka.client.service-url.defaultZone"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The HA guide's three peers: each document's hostname and service URLs with its profile.
    #[test]
    fn each_profile_document_gives_its_peer() {
        let text = "spring.application.name: eureka-server\n---\nspring:\n  profiles: peer1\neureka:\n  instance:\n    hostname: peer1\n  client:\n    serviceUrl:\n      defaultZone: http://peer2:8762/eureka/\n---\nspring:\n  profiles: peer2\neureka.instance.hostname: peer2\neureka.instance.metadataMap.zone: z2\neureka.client.serviceUrl.defaultZone: http://peer1:8761/eureka/\n";
        let p1 = profile_document("s.yml", text, "peer1").unwrap();
        assert_eq!(
            p1,
            ProfileDocument {
                line: 4,
                hostname: Some("peer1".into()),
                zone: None,
                service_url: Some("http://peer2:8762/eureka/".into()),
            }
        );
        let p2 = profile_document("s.yml", text, "peer2").unwrap();
        assert_eq!((p2.line, p2.zone.as_deref()), (13, Some("z2")));
        let err = profile_document("s.yml", text, "peer3").unwrap_err();
        assert!(
            err.contains("no document for profile `peer3` (its profile documents: peer1, peer2)"),
            "{err}"
        );
    }

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
