//! The kernel's and the drivers' rules that live in the core, each checked where it lives:
//! a policy through its public API, the host's rules through a scenario in and a report or a
//! trace out. One module per part; every test states the rule it holds the model to.

mod cpu;
mod driver;
mod hardirq;
mod moderation;
mod napi;
mod polling;
mod softirq;
