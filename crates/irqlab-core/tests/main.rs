//! The core's integration tests: scenario in, report or trace out, through the public API.
//! One binary, one module per file.

mod busypoll;
mod chang;
mod common;
mod costs;
mod defer;
mod distributions;
mod model;
mod napi;
mod napi_thread;
mod qos;
#[path = "rules/main.rs"]
mod rules;
mod structure;
mod topology;
mod veth;
mod xsk;
