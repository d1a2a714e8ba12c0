//! Settable parameters, declared once: [`declare_params!`] turns one list of
//! `key: type = default` entries, each with its check and a one-line meaning
//! (its doc line), into the struct, its `Default`, `set_key` (what `--set`
//! and `--config` call) and `keys` (what `pliant policies` and the docs'
//! table show). The core's policy parameters, the checkpoint storage and the
//! simulator's execution model are each declared this way.

/// One settable key as the docs show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    /// The key.
    pub key: &'static str,
    /// Its default, as the docs write it.
    pub default: String,
    /// What it means (its doc line).
    pub about: &'static str,
}

/// A rejected `KEY=VALUE`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// No declaration has the key.
    #[error("unknown parameter `{0}` (see `pliant policies` for the list)")]
    UnknownKey(String),
    /// The value does not parse or is out of range.
    #[error("bad value `{value}` for `{key}`: expected {expected}")]
    BadValue {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
}

/// A type a parameter may have: read from text, shown as the docs write it,
/// written into a run's `params`.
pub trait ParamValue: Sized {
    /// What a value of the type looks like, for errors.
    const EXPECTED: &'static str;
    /// What a value or `none` looks like, for errors of an optional key.
    const EXPECTED_OR_NONE: &'static str = Self::EXPECTED;
    /// Parses the textual form.
    fn parse_param(text: &str) -> Option<Self>;
    /// The textual form (`1`/`0` for flags, `3` for 3.0).
    fn show(&self) -> String;
    /// Writes the value into a run's `params` (numbers as numbers, flags as
    /// booleans, anything else as its textual form).
    fn serialize_param<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.show())
    }
}

impl ParamValue for f64 {
    const EXPECTED: &'static str = "a number";
    fn parse_param(text: &str) -> Option<Self> {
        text.parse().ok().filter(|x: &f64| x.is_finite())
    }
    fn show(&self) -> String {
        self.to_string()
    }
    fn serialize_param<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(*self)
    }
}

impl ParamValue for u64 {
    const EXPECTED: &'static str = "a whole number";
    fn parse_param(text: &str) -> Option<Self> {
        text.parse().ok()
    }
    fn show(&self) -> String {
        self.to_string()
    }
    fn serialize_param<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(*self)
    }
}

impl ParamValue for u32 {
    const EXPECTED: &'static str = "a whole number";
    fn parse_param(text: &str) -> Option<Self> {
        text.parse().ok()
    }
    fn show(&self) -> String {
        self.to_string()
    }
    fn serialize_param<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(*self)
    }
}

impl ParamValue for bool {
    const EXPECTED: &'static str = "1 or 0";
    fn parse_param(text: &str) -> Option<Self> {
        match text {
            "1" | "true" => Some(true),
            "0" | "false" => Some(false),
            _ => None,
        }
    }
    fn show(&self) -> String {
        if *self { "1" } else { "0" }.to_string()
    }
    fn serialize_param<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(*self)
    }
}

/// An optional key: `none` (or never given) is unset.
impl<T: ParamValue> ParamValue for Option<T> {
    const EXPECTED: &'static str = T::EXPECTED_OR_NONE;
    fn parse_param(text: &str) -> Option<Self> {
        match text {
            "none" => Some(None),
            _ => T::parse_param(text).map(Some),
        }
    }
    fn show(&self) -> String {
        self.as_ref().map_or_else(|| "none".to_string(), T::show)
    }
    fn serialize_param<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Some(v) => v.serialize_param(serializer),
            None => serializer.serialize_str("none"),
        }
    }
}

/// A value of a [`declare_params!`] struct in its `params` form.
#[doc(hidden)]
pub struct AsParam<'a, T>(pub &'a T);

impl<T: ParamValue> serde::Serialize for AsParam<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_param(serializer)
    }
}

/// A check: `Err(what was expected)` for a value out of range.
pub type Check<T> = fn(&T) -> Result<(), &'static str>;

/// Parses `value` for `key` and checks it.
pub fn parse_checked<T: ParamValue>(key: &str, value: &str, check: Check<T>) -> Result<T, ParamError> {
    let bad = |expected| ParamError::BadValue { key: key.into(), value: value.into(), expected };
    let v = T::parse_param(value).ok_or_else(|| bad(T::EXPECTED))?;
    check(&v).map_err(bad)?;
    Ok(v)
}

/// An optional key's check: unset, or a value `check` accepts.
pub fn if_set<T>(value: &Option<T>, check: Check<T>) -> Result<(), &'static str> {
    value.as_ref().map_or(Ok(()), check)
}

/// Any value of the type.
pub fn any<T>(_: &T) -> Result<(), &'static str> {
    Ok(())
}

/// Between 0 and 1.
pub fn fraction(x: &f64) -> Result<(), &'static str> {
    ok_if((0.0..=1.0).contains(x), "a number between 0 and 1")
}

/// Strictly between 0 and 1.
pub fn probability(x: &f64) -> Result<(), &'static str> {
    ok_if(*x > 0.0 && *x < 1.0, "a probability strictly between 0 and 1")
}

/// Greater than 0.
pub fn positive(x: &f64) -> Result<(), &'static str> {
    ok_if(*x > 0.0, "a positive number")
}

/// 0 or more (and under a billion: seconds a timer can hold).
pub fn non_negative(x: &f64) -> Result<(), &'static str> {
    ok_if((0.0..1e9).contains(x), "a non-negative number")
}

/// At least 1.
pub fn at_least_one(x: &f64) -> Result<(), &'static str> {
    ok_if(*x >= 1.0, "a number of at least 1")
}

/// A whole number of at least 1 that fits 32 bits.
pub fn whole_positive<T: Copy + Into<u64>>(x: &T) -> Result<(), &'static str> {
    let x: u64 = (*x).into();
    ok_if(x >= 1 && x <= u32::MAX as u64, "a whole number of at least 1")
}

/// A whole number that fits 32 bits.
pub fn whole<T: Copy + Into<u64>>(x: &T) -> Result<(), &'static str> {
    ok_if((*x).into() <= u32::MAX as u64, "a whole number")
}

fn ok_if(ok: bool, expected: &'static str) -> Result<(), &'static str> {
    if ok {
        Ok(())
    } else {
        Err(expected)
    }
}

/// The docs' table of `keys`: `| key | default | meaning |` rows.
pub fn markdown_table(keys: &[ParamInfo]) -> String {
    let mut out = String::from("| key | default | meaning |\n|---|---|---|\n");
    for k in keys {
        out += &format!("| `{}` | {} | {} |\n", k.key, k.default, k.about);
    }
    out
}

/// Shows a default: as the value shows itself, unless the declaration wrote it.
pub fn shown<T: ParamValue>(value: &T, written: Option<&str>) -> String {
    written.map_or_else(|| value.show(), str::to_string)
}

/// Declares a struct of settable parameters once. Each entry is
/// `/// meaning` then `key: Type = default, check;`, optionally with
/// `, shown "as the docs write it"` after the check. After the struct,
/// `nested { field: Type }` adds groups of keys declared the same way (serde
/// flattens them), and `extra { field: Type = default }` fields that are not
/// keys (serde skips them). A struct that implements `Serialize` by
/// `serialize_changed` shows only the keys set away from their defaults.
#[macro_export]
macro_rules! declare_params {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                #[doc = $about:literal]
                $field:ident : $ty:ty = $default:expr, $check:expr $(, shown $written:literal)?;
            )*
        }
        $(nested { $( $(#[doc = $ndoc:literal])* $nfield:ident : $nty:ty; )* })?
        $(extra { $( $(#[doc = $xdoc:literal])* $xfield:ident : $xty:ty = $xdefault:expr; )* })?
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $( #[doc = $about] pub $field: $ty, )*
            $($( $(#[doc = $ndoc])* #[serde(flatten)] pub $nfield: $nty, )*)?
            $($( $(#[doc = $xdoc])* #[serde(skip)] pub $xfield: $xty, )*)?
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    $( $field: $default, )*
                    $($( $nfield: <$nty>::default(), )*)?
                    $($( $xfield: $xdefault, )*)?
                }
            }
        }

        impl $name {
            /// Every key declared here (nested groups included), with its
            /// default as the docs write it and its meaning.
            pub fn keys() -> Vec<$crate::parameter::ParamInfo> {
                let d = Self::default();
                #[allow(unused_mut)]
                let mut keys = vec![$(
                    $crate::parameter::ParamInfo {
                        key: stringify!($field),
                        default: $crate::parameter::shown(&d.$field, None $(.or(Some($written)))?),
                        about: $about.trim(),
                    },
                )*];
                $($( keys.extend(<$nty>::keys()); )*)?
                keys
            }

            /// Writes the keys declared here (not the nested groups) whose
            /// values differ from their defaults, as a map: a run's `params`
            /// then read as they did before such keys existed.
            pub fn serialize_changed<S: $crate::__serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use $crate::__serde::ser::SerializeMap;
                let d = Self::default();
                let mut map = serializer.serialize_map(None)?;
                $(
                    if self.$field != d.$field {
                        map.serialize_entry(stringify!($field), &$crate::parameter::AsParam(&self.$field))?;
                    }
                )*
                map.end()
            }

            /// Sets `key` from its textual form; `None` when no key here is `key`.
            pub fn set_key(&mut self, key: &str, value: &str) -> Option<Result<(), $crate::parameter::ParamError>> {
                match key {
                    $( stringify!($field) => Some(
                        $crate::parameter::parse_checked::<$ty>(key, value, $check).map(|v| self.$field = v)
                    ), )*
                    _ => {
                        $($( if let Some(r) = self.$nfield.set_key(key, value) { return Some(r); } )*)?
                        None
                    }
                }
            }
        }
    };
}
