//! Scenario files: raw TOML with Spring property names -> a validated [`Scenario`].

mod error;
#[cfg(test)]
pub(crate) mod fixture;
mod http_client;
mod keys;
mod metric;
mod model;
mod parse;
mod release;

pub use error::ScenarioError;
pub use http_client::{CallPolicy, HttpClient};
pub use keys::{KeyDoc, key_catalogue};
pub use metric::{Metric, Statistic};
pub use model::*;
pub use parse::{load, parse_str};
pub use release::{EurekaVersion, Release, Train};
