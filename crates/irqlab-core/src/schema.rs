//! The language the key table is written in, and the validated values every part reads.
//!
//! A scenario arrives as flat `(dotted key, value)` pairs. The key table ([`crate::params`],
//! data) describes each key with a [`ParamSpec`]: its type and allowed values ([`Kind`]), its
//! default and its meaning; numbered entries (`app.0.core`, `traffic.classes.1.share`: what a
//! TOML array of tables flattens to) are described by a [`TableSpec`]; [`Preset`]s are the
//! defaults a choice brings. A [`Schema`] is the three together, and [`Schema::params`] checks
//! pairs against it and fills in the defaults, giving [`Params`]: the validated values each
//! part's `configure` reads.
//!
//! This module knows no key: the table is in `params`, the parts read their own keys. Closed
//! sets of names chosen by a key (schemes, policies, strategies, …) are declared with
//! `registry!`, which gives their names to the table and rejects
//! an unknown name with the same error the table gives.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

use crate::error::Error;

/// A scenario value as it comes from TOML, JSON or Python.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    /// A list of scalars (a TOML array), e.g. `nic.irq_affinity = [0, 0, 1]`.
    List(Vec<Value>),
}

/// Longest string and list a message shows whole; longer ones are cut, so that an error stays
/// one readable line whatever it was given.
const SHOWN_CHARS: usize = 64;
const SHOWN_ITEMS: usize = 16;

/// As a message shows it: strings quoted with control characters escaped, long strings and
/// lists cut (`"aaaa…" (1000 characters)`, `[0, 1, …] (1024 entries)`).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{}", fmt_float(*x)),
            Value::Str(s) => {
                let n = s.chars().count();
                if n > SHOWN_CHARS {
                    let head: String = s.chars().take(SHOWN_CHARS - 16).collect();
                    write!(f, "\"{}…\" ({n} characters)", head.escape_debug())
                } else {
                    write!(f, "\"{}\"", s.escape_debug())
                }
            }
            Value::List(items) => {
                write!(f, "[")?;
                for (i, v) in items.iter().take(SHOWN_ITEMS).enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                if items.len() > SHOWN_ITEMS {
                    write!(f, ", …] ({} entries)", items.len())
                } else {
                    write!(f, "]")
                }
            }
        }
    }
}

pub(crate) fn fmt_float(x: f64) -> String {
    if x.is_finite() && x == x.trunc() && x.abs() < 1e15 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

/// The type and allowed values of a key.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// `true` or `false`.
    Bool,
    /// An integer in `[min, max]`.
    Int { min: i128, max: i128 },
    /// An integer from a fixed set.
    IntOneOf(&'static [i128]),
    /// A finite float in `[min, max]`, or `(min, max]` if `min_open`. Integers are accepted.
    Float { min: f64, max: f64, min_open: bool },
    /// A string from a fixed set.
    OneOf(&'static [&'static str]),
    /// Free text, parsed and checked when the scenario is built; the words say what is allowed.
    Text(&'static str),
    /// A list of at most `max_len` integers, each in `[min, max]`.
    IntList {
        min: i128,
        max: i128,
        max_len: usize,
    },
}

/// A default value, as constant data.
#[derive(Clone, Copy, Debug)]
pub enum Default {
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(&'static str),
    /// The empty list.
    EmptyList,
}

impl Default {
    pub fn value(self) -> Value {
        match self {
            Default::Bool(b) => Value::Bool(b),
            Default::Int(i) => Value::Int(i),
            Default::Float(x) => Value::Float(x),
            Default::Str(s) => Value::Str(s.to_string()),
            Default::EmptyList => Value::List(Vec::new()),
        }
    }
}

/// One scenario key (or, in a [`TableSpec`], one field of an entry: `key` is the field name).
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub key: &'static str,
    pub kind: Kind,
    pub default: Default,
    pub doc: &'static str,
}

/// Numbered entries that share a set of fields: `{prefix}.{index}.{field}`.
#[derive(Clone, Copy, Debug)]
pub struct TableSpec {
    /// `app`, `traffic.classes`.
    pub prefix: &'static str,
    /// What one entry is, for messages ("app", "traffic class").
    pub noun: &'static str,
    /// Entries allowed at most.
    pub max_entries: usize,
    pub fields: &'static [ParamSpec],
    pub doc: &'static str,
}

impl Kind {
    /// What a user may write, in words, for error messages and `--help`.
    pub fn allowed(&self) -> String {
        match self {
            Kind::Bool => "true or false".to_string(),
            Kind::Int { min, max } => format!("an integer in {min} … {max}"),
            Kind::IntOneOf(set) => {
                let v: Vec<String> = set.iter().map(|i| i.to_string()).collect();
                format!("one of {}", v.join(", "))
            }
            Kind::Float { min, max, min_open } => {
                let lo = if *min_open { "(" } else { "[" };
                format!("a number in {lo}{}, {}]", fmt_g(*min), fmt_g(*max))
            }
            Kind::OneOf(set) => {
                let v: Vec<String> = set.iter().map(|s| format!("\"{s}\"")).collect();
                format!("one of {}", v.join(", "))
            }
            Kind::Text(words) => words.to_string(),
            Kind::IntList { min, max, max_len } => {
                format!("a list of at most {max_len} integers, each in {min} … {max}")
            }
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Kind::Bool => "true or false",
            Kind::Int { .. } | Kind::IntOneOf(_) => "an integer",
            Kind::Float { .. } => "a number",
            Kind::OneOf(_) | Kind::Text(_) => "a string",
            Kind::IntList { .. } => "a list of integers",
        }
    }

    /// Checks one value; returns it normalised (ints stay ints, floats become `Float`).
    fn check(&self, key: &str, value: &Value) -> Result<Value, Error> {
        let wrong_type = || Error::WrongType {
            key: key.to_string(),
            value: value.to_string(),
            expected: self.type_name().to_string(),
        };
        let out_of_range = || Error::OutOfRange {
            key: key.to_string(),
            value: value.to_string(),
            allowed: format!("must be {}", self.allowed()),
        };
        match (self, value) {
            (Kind::Bool, Value::Bool(b)) => Ok(Value::Bool(*b)),
            (Kind::Int { min, max }, Value::Int(i)) => {
                if i < min || i > max {
                    return Err(out_of_range());
                }
                Ok(Value::Int(*i))
            }
            (Kind::IntOneOf(set), Value::Int(i)) => {
                if !set.contains(i) {
                    return Err(out_of_range());
                }
                Ok(Value::Int(*i))
            }
            (Kind::Float { min, max, min_open }, Value::Int(_) | Value::Float(_)) => {
                let x = match value {
                    Value::Int(i) => *i as f64,
                    Value::Float(x) => *x,
                    _ => unreachable!(),
                };
                let low_ok = if *min_open { x > *min } else { x >= *min };
                if !x.is_finite() || !low_ok || x > *max {
                    return Err(out_of_range());
                }
                Ok(Value::Float(x))
            }
            (Kind::OneOf(set), Value::Str(s)) => {
                if !set.contains(&s.as_str()) {
                    return Err(out_of_range());
                }
                Ok(Value::Str(s.clone()))
            }
            (Kind::Text(_), Value::Str(s)) => Ok(Value::Str(s.trim().to_string())),
            (Kind::IntList { min, max, max_len }, Value::List(items)) => {
                if items.len() > *max_len {
                    return Err(out_of_range());
                }
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        Value::Int(i) if i >= min && i <= max => out.push(Value::Int(*i)),
                        Value::Int(_) => return Err(out_of_range()),
                        _ => return Err(wrong_type()),
                    }
                }
                Ok(Value::List(out))
            }
            _ => Err(wrong_type()),
        }
    }
}

fn fmt_g(x: f64) -> String {
    if x != 0.0 && (x.abs() >= 1e6 || x.abs() < 1e-3) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// Defaults that a choice brings with it: when `key` has `value`, each listed key that the
/// scenario does not set takes the listed value. Scheme presets rank above platform presets,
/// which rank above the schema defaults; a key set explicitly always wins.
pub struct Preset {
    pub key: &'static str,
    pub value: &'static str,
    pub defaults: &'static [(&'static str, Default)],
    pub doc: &'static str,
}

/// A key table: its plain keys, its numbered entries and its presets (highest rank first).
#[derive(Clone, Copy)]
pub struct Schema {
    pub params: &'static [ParamSpec],
    pub tables: &'static [TableSpec],
    pub presets: &'static [Preset],
}

/// The table is data: shown by name, not listed.
impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Schema({} keys)", self.params.len())
    }
}

/// What a dotted key names.
#[derive(Clone, Copy, Debug)]
pub enum Lookup {
    Plain(&'static ParamSpec),
    /// Field `field` of entry `index` of `table`.
    Field {
        table: &'static TableSpec,
        index: usize,
        field: &'static ParamSpec,
    },
}

impl Lookup {
    pub fn spec(&self) -> &'static ParamSpec {
        match self {
            Lookup::Plain(s) => s,
            Lookup::Field { field, .. } => field,
        }
    }
}

/// The key of field `field` of entry `index` of the table `prefix`.
pub fn field_key(prefix: &str, index: usize, field: &str) -> String {
    format!("{prefix}.{index}.{field}")
}

impl Schema {
    /// Looks up a plain key.
    pub fn spec(&'static self, key: &str) -> Option<&'static ParamSpec> {
        self.params.iter().find(|p| p.key == key)
    }

    /// Looks up a key: a plain key or `{table}.{index}.{field}`.
    pub fn lookup(&'static self, key: &str) -> Result<Lookup, Error> {
        if let Some(s) = self.spec(key) {
            return Ok(Lookup::Plain(s));
        }
        for table in self.tables {
            let Some(rest) = key
                .strip_prefix(table.prefix)
                .and_then(|r| r.strip_prefix('.'))
            else {
                continue;
            };
            return table.lookup(key, rest);
        }
        Err(self.unknown_key(key))
    }

    /// Validates `(dotted key, value)` pairs against the schema and fills in defaults.
    /// A key given twice keeps its last value (later overrides win).
    pub fn params<K: AsRef<str>>(
        &'static self,
        pairs: impl IntoIterator<Item = (K, Value)>,
    ) -> Result<Params, Error> {
        let mut given: BTreeMap<String, Value> = BTreeMap::new();
        let mut given_keys: BTreeSet<&'static str> = BTreeSet::new();
        let mut indices: Vec<Vec<bool>> = self.tables.iter().map(|_| Vec::new()).collect();
        for (key, value) in pairs {
            let key = key.as_ref();
            match self.lookup(key)? {
                Lookup::Plain(spec) => {
                    given.insert(spec.key.to_string(), spec.kind.check(key, &value)?);
                    given_keys.insert(spec.key);
                }
                Lookup::Field {
                    table,
                    index,
                    field,
                } => {
                    let t = self.table_index(table.prefix);
                    if indices[t].len() <= index {
                        indices[t].resize(index + 1, false);
                    }
                    indices[t][index] = true;
                    given.insert(
                        field_key(table.prefix, index, field.key),
                        field.kind.check(key, &value)?,
                    );
                }
            }
        }
        let mut values: BTreeMap<String, Value> = self
            .params
            .iter()
            .map(|p| (p.key.to_string(), p.default.value()))
            .collect();
        // Presets, lowest rank first, so that higher ranks overwrite.
        for preset in self.presets.iter().rev() {
            let chosen = given
                .get(preset.key)
                .cloned()
                .unwrap_or_else(|| self.spec(preset.key).expect("preset key").default.value());
            if chosen == Value::Str(preset.value.to_string()) {
                for (k, d) in preset.defaults {
                    values.insert(
                        self.spec(k).expect("preset default key").key.to_string(),
                        d.value(),
                    );
                }
            }
        }
        values.extend(given);
        let mut entries = Vec::with_capacity(self.tables.len());
        for (table, seen) in self.tables.iter().zip(&indices) {
            if let Some(gap) = seen.iter().position(|s| !s) {
                let n = seen.len();
                return Err(Error::Inconsistent {
                    key: format!("{}.{gap}", table.prefix),
                    value: "missing".into(),
                    reason: format!(
                        "{} entries are numbered from 0 without gaps; {} given up to {}.{}",
                        table.noun,
                        n,
                        table.prefix,
                        n - 1
                    ),
                });
            }
            for i in 0..seen.len() {
                for f in table.fields {
                    values
                        .entry(field_key(table.prefix, i, f.key))
                        .or_insert_with(|| f.default.value());
                }
            }
            entries.push(seen.len());
        }
        Ok(Params {
            values,
            entries,
            given: given_keys,
            schema: self,
        })
    }

    fn table_index(&self, prefix: &str) -> usize {
        self.tables
            .iter()
            .position(|t| t.prefix == prefix)
            .expect("a table of the schema")
    }

    fn unknown_key(&self, key: &str) -> Error {
        let best = self
            .params
            .iter()
            .map(|p| (levenshtein(key, p.key), p.key))
            .min()
            .filter(|(d, _)| *d <= 3.max(key.len() / 3));
        let hint = match best {
            Some((_, k)) => format!(" (did you mean '{k}'?)"),
            None => {
                let section = key.split('.').next().unwrap_or("");
                let keys: Vec<&str> = self
                    .params
                    .iter()
                    .filter(|p| p.key.starts_with(&format!("{section}.")))
                    .map(|p| p.key)
                    .collect();
                if keys.is_empty() {
                    let sections: Vec<&str> = {
                        let mut s: Vec<&str> = self
                            .params
                            .iter()
                            .map(|p| p.key.split('.').next().unwrap_or(p.key))
                            .chain(self.tables.iter().map(|t| t.prefix))
                            .collect();
                        s.dedup();
                        s
                    };
                    format!("; top-level keys and sections are: {}", sections.join(", "))
                } else {
                    format!("; keys of [{section}] are: {}", keys.join(", "))
                }
            }
        };
        Error::UnknownKey {
            key: key.to_string(),
            hint,
        }
    }
}

impl TableSpec {
    /// Looks up `rest` = `{index}.{field}` of the dotted key `key` in this table.
    fn lookup(&'static self, key: &str, rest: &str) -> Result<Lookup, Error> {
        let (index, field) = rest.split_once('.').unwrap_or((rest, ""));
        let canonical = !index.is_empty()
            && index.bytes().all(|b| b.is_ascii_digit())
            && (index == "0" || !index.starts_with('0'));
        if !canonical {
            return Err(Error::UnknownKey {
                key: key.to_string(),
                hint: format!(
                    "; {} entries are written {}.N.field with N = 0, 1, …",
                    self.noun, self.prefix
                ),
            });
        }
        let index: usize = index.parse().unwrap_or(usize::MAX);
        if index >= self.max_entries {
            return Err(Error::OutOfRange {
                key: key.to_string(),
                value: index.to_string(),
                allowed: format!(
                    "at most {} entries of {} (N = 0 … {})",
                    self.max_entries,
                    self.prefix,
                    self.max_entries - 1
                ),
            });
        }
        let Some(f) = self.fields.iter().find(|f| f.key == field) else {
            let names: Vec<&str> = self.fields.iter().map(|f| f.key).collect();
            let best = names
                .iter()
                .map(|n| (levenshtein(field, n), *n))
                .min()
                .filter(|(d, _)| *d <= 3.max(field.len() / 3));
            let hint = match best {
                Some((_, n)) => format!(" (did you mean '{}.{index}.{n}'?)", self.prefix),
                None => format!("; fields of {} are: {}", self.prefix, names.join(", ")),
            };
            return Err(Error::UnknownKey {
                key: key.to_string(),
                hint,
            });
        };
        Ok(Lookup::Field {
            table: self,
            index,
            field: f,
        })
    }
}

/// A complete, validated set of scenario values: every plain key present, every field of each
/// numbered entry present, each in range.
#[derive(Clone, Debug)]
pub struct Params {
    values: BTreeMap<String, Value>,
    /// Entries of each table, in the schema's table order.
    entries: Vec<usize>,
    /// The plain keys given (rather than defaulted), for settings whose default depends on
    /// the scenario (`run.duration_ms` of a replay).
    given: BTreeSet<&'static str>,
    /// The schema they were checked against.
    schema: &'static Schema,
}

/// Two sets of params are equal when their values are: how they were given does not matter.
impl PartialEq for Params {
    fn eq(&self, other: &Params) -> bool {
        self.values == other.values && self.entries == other.entries
    }
}

impl Params {
    /// The schema these values were checked against.
    pub fn schema(&self) -> &'static Schema {
        self.schema
    }

    /// Whether the plain key `key` was given (rather than left to its default).
    pub fn given(&self, key: &str) -> bool {
        self.given.contains(key)
    }

    /// What every key would be if this scenario set nothing but its scheme and platform
    /// preset: the defaults with the presets those bring. A key whose value differs from this
    /// was set to something of its own.
    pub fn unset(&self) -> Params {
        let presets: BTreeSet<&str> = self.schema.presets.iter().map(|p| p.key).collect();
        self.schema
            .params(presets.into_iter().map(|k| (k, self.get(k).clone())))
            .expect("a scheme and a platform preset alone are valid")
    }

    /// The plain keys set to a value other than the one they would have if the scenario left
    /// them out ([`Params::unset`]).
    pub fn set_keys(&self) -> BTreeSet<&'static str> {
        let unset = self.unset();
        self.schema
            .params
            .iter()
            .map(|s| s.key)
            .filter(|k| self.get(k) != unset.get(k))
            .collect()
    }

    /// The error of `key`'s value, which its range allows but the rest of the scenario does
    /// not: `key = value: reason`.
    pub fn inconsistent(&self, key: &str, reason: impl Into<String>) -> Error {
        Error::Inconsistent {
            key: key.to_string(),
            value: self.get(key).to_string(),
            reason: reason.into(),
        }
    }

    pub fn get(&self, key: &str) -> &Value {
        self.values
            .get(key)
            .unwrap_or_else(|| panic!("internal: '{key}' is not a schema key"))
    }

    pub fn f64(&self, key: &str) -> f64 {
        match self.get(key) {
            Value::Float(x) => *x,
            Value::Int(i) => *i as f64,
            v => panic!("internal: '{key}' = {v} is not a number"),
        }
    }

    pub fn u64(&self, key: &str) -> u64 {
        match self.get(key) {
            Value::Int(i) => *i as u64,
            v => panic!("internal: '{key}' = {v} is not an integer"),
        }
    }

    pub fn str(&self, key: &str) -> &str {
        match self.get(key) {
            Value::Str(s) => s,
            v => panic!("internal: '{key}' = {v} is not a string"),
        }
    }

    pub fn bool(&self, key: &str) -> bool {
        match self.get(key) {
            Value::Bool(b) => *b,
            v => panic!("internal: '{key}' = {v} is not a boolean"),
        }
    }

    /// A list of integers (validated non-negative by its kind).
    pub fn u64_list(&self, key: &str) -> Vec<u64> {
        match self.get(key) {
            Value::List(items) => items
                .iter()
                .map(|v| match v {
                    Value::Int(i) => *i as u64,
                    v => panic!("internal: '{key}' holds {v}, not an integer"),
                })
                .collect(),
            v => panic!("internal: '{key}' = {v} is not a list"),
        }
    }

    /// Entries given for the table `prefix` (`app`, `traffic.classes`).
    pub fn entries(&self, prefix: &str) -> usize {
        self.schema
            .tables
            .iter()
            .position(|t| t.prefix == prefix)
            .map_or(0, |t| self.entries[t])
    }

    /// Replaces a value the scenario derives (e.g. an automatic setting resolved).
    pub(crate) fn set(&mut self, key: &str, value: Value) {
        debug_assert!(self.schema.lookup(key).is_ok(), "{key}");
        self.values.insert(key.to_string(), value);
    }

    /// Sets a field of numbered entry `index` of table `prefix` (the entries up to it exist
    /// afterwards, their unset fields at their defaults): for entries a setting derives.
    pub(crate) fn set_entry(&mut self, prefix: &str, index: usize, field: &str, value: Value) {
        let t = self.schema.table_index(prefix);
        while self.entries[t] <= index {
            let i = self.entries[t];
            for f in self.schema.tables[t].fields {
                self.values
                    .entry(field_key(prefix, i, f.key))
                    .or_insert_with(|| f.default.value());
            }
            self.entries[t] += 1;
        }
        self.set(&field_key(prefix, index, field), value);
    }

    /// All values, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

// ----- registries: closed sets of names a key chooses from -----------------------------------

/// The error of an unknown name for `key`: the one the table gives for a value outside
/// [`Kind::OneOf`]`(names)`, listing the known names.
pub fn unknown_name(key: &str, name: &str, names: &'static [&'static str]) -> Error {
    Error::OutOfRange {
        key: key.to_string(),
        value: Value::Str(name.to_string()).to_string(),
        allowed: format!("must be {}", Kind::OneOf(names).allowed()),
    }
}

/// Declares a closed set of variants that a string key chooses from: a unit enum (`Clone`,
/// `Copy`, `Debug`, `PartialEq`, `Eq`: a name is a value), its names (`NAMES`, the allowed
/// values the key table lists), `name`, and `parse`, whose error for an unknown name is the
/// table's (it lists the known names). The match is exhaustive: a name maps to a variant or is
/// an error, never a silent default. With `key: K;` the set belongs to one key, and
/// `from_name` and `of` read it; without, the set serves several keys (the distributions of
/// the costs), read with `read(p, key)`.
///
/// ```text
/// registry! {
///     key: "nic.cause_mode";
///     /// How re-enabling the vector treats a latched cause.
///     pub enum CauseMode {
///         Latched = "latched",
///         Armed = "armed",
///     }
/// }
/// ```
macro_rules! registry {
    (
        key: $key:expr;
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $kind:expr ),+ $(,)?
        }
    ) => {
        $crate::schema::registry! {
            $(#[$meta])*
            $vis enum $name {
                $( $(#[$vmeta])* $variant = $kind ),+
            }
        }

        impl $name {
            /// The key that chooses one.
            pub const KEY: &'static str = $key;

            /// The variant named `name`; an unknown name is an error listing the known ones.
            pub fn from_name(name: &str) -> Result<$name, $crate::error::Error> {
                Self::parse($key, name)
            }

            /// The variant the scenario chooses.
            pub fn of(p: &$crate::schema::Params) -> Result<$name, $crate::error::Error> {
                Self::read(p, $key)
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $kind:expr ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// Every variant, in the order of [`Self::NAMES`].
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The names, in the order the key table lists them as its allowed values.
            pub const NAMES: &'static [&'static str] = &[$($kind),+];

            /// Its name, as a key is set to it.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $kind),+
                }
            }

            /// The variant named `name` as `key`'s value; an unknown name is an error naming
            /// `key` and listing the known names.
            pub fn parse(key: &str, name: &str) -> Result<$name, $crate::error::Error> {
                $(
                    if name == $kind {
                        return Ok($name::$variant);
                    }
                )+
                Err($crate::schema::unknown_name(key, name, Self::NAMES))
            }

            /// The variant `key` names in the scenario.
            pub fn read(p: &$crate::schema::Params, key: &str) -> Result<$name, $crate::error::Error> {
                Self::parse(key, p.str(key))
            }
        }
    };
}
pub(crate) use registry;

/// Declares a part's keys once: a constant per key and the list of them, in order (what the
/// warnings name and the check that each key of the table belongs to one part reads).
///
/// A key's constant is named after it: the last part of the key, in capitals, after the
/// list's prefix (`NAPI_WEIGHT` in `"kernel."` is `kernel.napi_weight`), so an entry is
/// mostly just its name. The entries of `KEYS = "prefix" [ … ]`:
/// - `NAME`: the key `prefix` + `name` (`pub const NAME: &str`);
/// - `[NAME]`: a cost's two keys, its mean and its distribution, `prefix` + `name_ns` and
///   `name_dist` (`pub const NAME: [&str; 2]`);
/// - `NAME = "key"`, `NAME = ["mean", "dist"]`: a key (or a pair) not named that way;
/// - `path::NAME`: a key declared elsewhere;
/// - `GROUP = [ … ]`, `GROUP = "prefix" [ … ]`: a named sub-list, declared as a list of its
///   own (with this prefix or its own) and part of this one.
///
/// ```text
/// keys! {
///     /// The kernel's keys.
///     pub KEYS = "kernel." [
///         /// What Salah's polling loop replaces.
///         pub SOFTIRQ_KEYS = [NAPI_WEIGHT, NETDEV_BUDGET],
///         HZ,
///     ];
/// }
/// ```
macro_rules! keys {
    (
        $(#[$meta:meta])* $vis:vis $list:ident = $prefix:literal [ $($entries:tt)* ] $(;)?
    ) => {
        $crate::schema::keys!(@munch [$(#[$meta])* $vis $list] $prefix [] $($entries)*);
    };
    // all read: the list
    (@munch [$(#[$meta:meta])* $vis:vis $list:ident] $prefix:literal [$($acc:expr,)*] $(,)?) => {
        $(#[$meta])*
        $vis const $list: &[&str] = &[$($acc),*];
    };
    // a key declared elsewhere
    (@munch $head:tt $prefix:literal [$($acc:tt)*]
        $first:ident $(:: $seg:ident)+ $(, $($rest:tt)*)?) => {
        $crate::schema::keys!(@munch $head $prefix [$($acc)* $first $(:: $seg)+,] $($($rest)*)?);
    };
    // a pair of keys, given
    (@munch $head:tt $prefix:literal [$($acc:tt)*]
        $(#[$meta:meta])* $name:ident = [$mean:literal, $dist:literal] $(, $($rest:tt)*)?) => {
        $(#[$meta])*
        pub const $name: [&str; 2] = [$mean, $dist];
        $crate::schema::keys!(@munch $head $prefix [$($acc)* $name[0], $name[1],] $($($rest)*)?);
    };
    // a sub-list with its own prefix
    (@munch $head:tt $prefix:literal [$($acc:tt)*]
        $(#[$meta:meta])* $vis:vis $group:ident = $own:literal [ $($inner:tt)* ]
        $(, $($rest:tt)*)?) => {
        $crate::schema::keys!($(#[$meta])* $vis $group = $own [ $($inner)* ]);
        $crate::schema::keys!(@names $head $prefix [$($acc)*] [$($($rest)*)?] $($inner)*);
    };
    // a sub-list
    (@munch $head:tt $prefix:literal [$($acc:tt)*]
        $(#[$meta:meta])* $vis:vis $group:ident = [ $($inner:tt)* ] $(, $($rest:tt)*)?) => {
        $crate::schema::keys!($(#[$meta])* $vis $group = $prefix [ $($inner)* ]);
        $crate::schema::keys!(@names $head $prefix [$($acc)*] [$($($rest)*)?] $($inner)*);
    };
    // a key, given
    (@munch $head:tt $prefix:literal [$($acc:tt)*]
        $(#[$meta:meta])* $name:ident = $key:literal $(, $($rest:tt)*)?) => {
        $(#[$meta])*
        pub const $name: &str = $key;
        $crate::schema::keys!(@munch $head $prefix [$($acc)* $name,] $($($rest)*)?);
    };
    // a cost's pair of keys, named
    (@munch $head:tt $prefix:literal [$($acc:tt)*]
        $(#[$meta:meta])* [$name:ident] $(, $($rest:tt)*)?) => {
        $(#[$meta])*
        pub const $name: [&str; 2] = [
            $crate::schema::keys!(@key $prefix, $name, "_ns"),
            $crate::schema::keys!(@key $prefix, $name, "_dist"),
        ];
        $crate::schema::keys!(@munch $head $prefix [$($acc)* $name[0], $name[1],] $($($rest)*)?);
    };
    // a key, named
    (@munch $head:tt $prefix:literal [$($acc:tt)*]
        $(#[$meta:meta])* $name:ident $(, $($rest:tt)*)?) => {
        $(#[$meta])*
        pub const $name: &str = $crate::schema::keys!(@key $prefix, $name, "");
        $crate::schema::keys!(@munch $head $prefix [$($acc)* $name,] $($($rest)*)?);
    };
    // the names of a sub-list's entries (declared already), then on with the rest
    (@names $head:tt $prefix:literal [$($acc:tt)*] [$($rest:tt)*] $(,)?) => {
        $crate::schema::keys!(@munch $head $prefix [$($acc)*] $($rest)*);
    };
    (@names $head:tt $prefix:literal [$($acc:tt)*] $rest:tt
        $first:ident $(:: $seg:ident)+ $(, $($inner:tt)*)?) => {
        $crate::schema::keys!(@names $head $prefix [$($acc)* $first $(:: $seg)+,] $rest $($($inner)*)?);
    };
    (@names $head:tt $prefix:literal [$($acc:tt)*] $rest:tt
        $(#[$meta:meta])* $name:ident = [$mean:literal, $dist:literal] $(, $($inner:tt)*)?) => {
        $crate::schema::keys!(@names $head $prefix [$($acc)* $name[0], $name[1],] $rest $($($inner)*)?);
    };
    (@names $head:tt $prefix:literal [$($acc:tt)*] $rest:tt
        $(#[$meta:meta])* $name:ident = $key:literal $(, $($inner:tt)*)?) => {
        $crate::schema::keys!(@names $head $prefix [$($acc)* $name,] $rest $($($inner)*)?);
    };
    (@names $head:tt $prefix:literal [$($acc:tt)*] $rest:tt
        $(#[$meta:meta])* [$name:ident] $(, $($inner:tt)*)?) => {
        $crate::schema::keys!(@names $head $prefix [$($acc)* $name[0], $name[1],] $rest $($($inner)*)?);
    };
    (@names $head:tt $prefix:literal [$($acc:tt)*] $rest:tt
        $(#[$meta:meta])* $name:ident $(, $($inner:tt)*)?) => {
        $crate::schema::keys!(@names $head $prefix [$($acc)* $name,] $rest $($($inner)*)?);
    };
    // `prefix` + the name in lower case + `suffix`, as a constant `&str`
    (@key $prefix:literal, $name:ident, $suffix:literal) => {{
        const PARTS: [&str; 3] = [$prefix, stringify!($name), $suffix];
        const BYTES: [u8; PARTS[0].len() + PARTS[1].len() + PARTS[2].len()] =
            $crate::schema::key_of(PARTS);
        match ::core::str::from_utf8(&BYTES) {
            Ok(key) => key,
            Err(_) => panic!("a key is ASCII"),
        }
    }};
}
pub(crate) use keys;

/// The bytes of a key named by its constant: `parts` joined, the name (the middle one) in
/// lower case. `N` is their length.
pub const fn key_of<const N: usize>(parts: [&str; 3]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut n = 0;
    let mut p = 0;
    while p < 3 {
        let bytes = parts[p].as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            out[n] = if p == 1 {
                bytes[i].to_ascii_lowercase()
            } else {
                bytes[i]
            };
            n += 1;
            i += 1;
        }
        p += 1;
    }
    assert!(n == N, "N is the key's length");
    out
}

#[cfg(test)]
mod tests {
    mod elsewhere {
        pub const SHARED: &str = "part.shared";
    }

    keys! {
        /// A part's keys, with every kind of entry.
        KEYS = "part." [
            NAMED,
            GIVEN = "other.given",
            [COST],
            PAIR = ["part.pair_us", "part.pair_dist"],
            elsewhere::SHARED,
            GROUP = "part.group_" [FIRST, SECOND],
            LAST,
        ];
    }

    #[test]
    fn keys_are_declared_once_each_constant_named_after_its_key() {
        assert_eq!(NAMED, "part.named");
        assert_eq!(GIVEN, "other.given");
        assert_eq!(COST, ["part.cost_ns", "part.cost_dist"]);
        assert_eq!(PAIR, ["part.pair_us", "part.pair_dist"]);
        assert_eq!(GROUP, ["part.group_first", "part.group_second"]);
        assert_eq!(
            KEYS,
            [
                "part.named",
                "other.given",
                "part.cost_ns",
                "part.cost_dist",
                "part.pair_us",
                "part.pair_dist",
                "part.shared",
                "part.group_first",
                "part.group_second",
                "part.last",
            ]
        );
    }
}
