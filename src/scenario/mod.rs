//! Scenario files: raw TOML with Spring property names -> a validated [`Scenario`].

mod balancer;
mod call_policy;
mod error;
#[cfg(test)]
pub(crate) mod fixture;
mod keys;
mod metric;
mod model;
mod parse;
pub mod presets;
mod release;
mod spring;

pub use balancer::{BalancerDescriptor, BalancerKind};
pub use call_policy::{
    CallPolicy, REFUSAL_RECORDED_AFTER_MS, RETRY_TEMPLATE_REFUSAL_RECORDED_AFTER_MS,
};
pub use error::ScenarioError;
pub use keys::{KeyDoc, key_catalogue};
pub use metric::{Metric, Statistic};
pub use model::*;
pub use parse::{ScenarioSource, load, parse_str};
pub use release::{EurekaClientTransport, EurekaVersion, Release, TimeoutProperties, Train};
pub use spring::{FileEvidence, ProfileDocument, file_evidence, profile_document};
