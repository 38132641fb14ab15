//! Settings without effect: the [`Warning`] a scenario carries, and the collector each part's
//! `warnings` adds its rules to.
//!
//! A scheme is a preset of one host model, so every key can be set with every scheme, and many
//! keys mean nothing to some scenarios (an ITR to a host without interrupts, a polling period
//! to NAPI). A setting the scenario ignores, or that does not do what its name says, is a
//! warning naming the key: the run is valid, and a sweep that crosses schemes with keys only
//! some of them use runs as it always did. (A setting that would make the run something else
//! than its scheme says is an error instead, found by the part or by `scenario`.)
//!
//! Only a key set to a value of its own is reported: a key left out, set to the value it would
//! have anyway (its default, or a preset's), or set to the value the scenario resolves for it
//! (an echo of a previous run: `hybrid.switch_pps`, `driver.link_gbps`) is not. Nor is a
//! `platform.*` key: the platform describes the machine, not a choice of the receive path.
//! The decisions are recorded in docs/scenario.md ("Settings a scheme ignores").

use std::collections::BTreeSet;

use crate::schema::Params;

/// A setting that has no effect in its scenario, or not the one its name says. The scenario is
/// valid and runs; the Python layer shows it as a warning (`irqlab.ConfigWarning`).
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    pub key: String,
    /// The value as given, formatted as in errors.
    pub value: String,
    /// Why it has no effect, and what would use it.
    pub reason: String,
    /// The value the setting acts as, when it has an effect but not exactly the one its value
    /// says (a time the kernel rounds up to whole jiffies); None: it has no effect at all. A
    /// caller that drops the settings without effect (the probe, tune's candidates) keeps
    /// these.
    pub acts_as: Option<String>,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} = {}: {}", self.key, self.value, self.reason)
    }
}

/// `has no effect: {why}`.
pub fn no_effect(why: &str) -> String {
    format!("has no effect: {why}")
}

/// The warnings of one scenario, collected rule by rule: the parts add their rules in the
/// order `scenario` calls them, and the first rule that applies to a key gives its reason.
pub struct Warnings<'a> {
    /// The scenario's values, resolved.
    pub p: &'a Params,
    /// Keys set to a value of their own, not yet reported.
    set: BTreeSet<&'static str>,
    /// The values of a scenario that sets nothing ([`Params::unset`]).
    unset: Params,
    out: Vec<Warning>,
}

impl<'a> Warnings<'a> {
    /// The collector of `p`, whose keys `set` were set to a value of their own before the
    /// scenario resolved its automatic settings.
    pub fn new(p: &'a Params, set: BTreeSet<&'static str>) -> Warnings<'a> {
        Warnings {
            p,
            set,
            unset: p.unset(),
            out: Vec::new(),
        }
    }

    /// `key` holds a value the scenario resolved (an echo): not a setting of its own.
    pub fn echo(&mut self, key: &str) {
        self.set.remove(key);
    }

    /// If `applies`, each of `keys` set to a value of its own and not yet reported is reported
    /// with `reason()`.
    pub fn rule(&mut self, keys: &[&'static str], applies: bool, reason: impl Fn() -> String) {
        if !applies {
            return;
        }
        for k in keys {
            if self.set.remove(k) {
                self.out.push(Warning {
                    key: (*k).to_string(),
                    value: self.p.get(k).to_string(),
                    reason: reason(),
                    acts_as: None,
                });
            }
        }
    }

    /// Reports `key` with `reason` if its value differs from a scenario that sets nothing,
    /// whether or not a rule reported it already (the rules of busy polling and of the
    /// request/response workload, which name what is missing).
    pub fn changed(&mut self, key: &str, reason: String) {
        if self.p.get(key) != self.unset.get(key) {
            self.out.push(Warning {
                key: key.into(),
                value: self.p.get(key).to_string(),
                reason,
                acts_as: None,
            });
        }
    }

    /// Reports `key`, a field of a numbered entry (`app.0.xsk_ring`), with `reason` if its
    /// value differs from the field's default (entries have no preset).
    pub fn entry_field(&mut self, key: &str, reason: String) {
        let spec = self
            .p
            .schema()
            .lookup(key)
            .expect("a field of the key table");
        if *self.p.get(key) != spec.spec().default.value() {
            self.out.push(Warning {
                key: key.into(),
                value: self.p.get(key).to_string(),
                reason,
                acts_as: None,
            });
        }
    }

    /// If `key` is set to a value of its own, not yet reported, and acts as another value
    /// (`acts_as` is Some: what the kernel makes of it), reports it with `reason`: the setting
    /// has an effect, but not exactly the one its value says.
    pub fn acts_as(
        &mut self,
        key: &'static str,
        acts_as: Option<String>,
        reason: impl Fn() -> String,
    ) {
        let Some(acts_as) = acts_as else {
            return;
        };
        if self.set.remove(key) {
            self.out.push(Warning {
                key: key.into(),
                value: self.p.get(key).to_string(),
                reason: reason(),
                acts_as: Some(acts_as),
            });
        }
    }

    /// The warnings, in the order they were found.
    pub fn finish(self) -> Vec<Warning> {
        self.out
    }
}
