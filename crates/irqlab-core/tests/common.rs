//! What every test module builds scenarios with: values, and scenario pairs.

use irqlab_core::{Report, Scenario, Value, run};

/// Picoseconds per microsecond.
pub const US: u64 = 1_000_000;

pub fn f(x: f64) -> Value {
    Value::Float(x)
}
pub fn i(x: i128) -> Value {
    Value::Int(x)
}
pub fn s(x: &str) -> Value {
    Value::Str(x.to_string())
}
pub fn b(x: bool) -> Value {
    Value::Bool(x)
}
pub fn list(xs: &[i128]) -> Value {
    Value::List(xs.iter().map(|&x| Value::Int(x)).collect())
}

/// Scenario pairs; a key given again overrides the earlier value.
#[derive(Clone, Debug, Default)]
pub struct Pairs(Vec<(String, Value)>);

impl Pairs {
    pub fn with(mut self, key: &str, value: Value) -> Pairs {
        self.0.push((key.to_string(), value));
        self
    }
    /// Every pair of `other` on top of these.
    pub fn and(mut self, other: &Pairs) -> Pairs {
        self.0.extend(other.0.iter().cloned());
        self
    }
    /// Without `key` (as if never given).
    pub fn without(mut self, key: &str) -> Pairs {
        self.0.retain(|(k, _)| k != key);
        self
    }
    pub fn try_build(&self) -> Result<Scenario, irqlab_core::Error> {
        Scenario::from_pairs(self.0.iter().cloned())
    }
    pub fn build(&self) -> Scenario {
        self.try_build()
            .unwrap_or_else(|e| panic!("a valid scenario, got: {e}"))
    }
    pub fn run(&self) -> Report {
        run(&self.build())
    }
    /// The keys the scenario warns about, with their messages.
    pub fn warnings(&self) -> Vec<String> {
        self.build()
            .warnings
            .iter()
            .map(|w| w.to_string())
            .collect()
    }
}
