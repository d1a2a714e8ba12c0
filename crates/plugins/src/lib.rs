//! The papers' scheduling steps as plugins of `pliant-core`'s public API: a
//! folder per paper — BIG-C (`bigc/`), the checkpoint paper
//! (`checkpoint/`), YARN-ME with YARN's fair scheduler (`yarn_me/`), SSR
//! (`ssr/`) — one for pliant's own cost-based policy (`pliant/`) and the
//! plain mechanisms they share (`plain/`). [`registry`] is the registry with
//! every built-in plugin and the presets (`presets.rs`), its built-in
//! profiles; [`preset`] builds one. This crate depends on `pliant-core` as
//! any crate outside the repository would.
#![warn(missing_docs)]

pub mod bigc;
mod builtin;
pub mod checkpoint;
mod plain;
pub mod pliant;
mod presets;
pub mod ssr;
pub mod yarn_me;

pub use builtin::by_rule;
pub use presets::PRESETS;

use pliant_core::policy::{Params, Policy, Registry};

/// A registry of the built-in plugins and presets, to which plugins from
/// outside may be added.
pub fn registry() -> Registry {
    Registry::new(&builtin::BUILTIN, PRESETS)
}

/// Builds the preset `name` with `params` through the built-in registry,
/// or `None` for an unknown name.
pub fn preset(name: &str, params: &Params) -> Option<Policy> {
    let registry = registry();
    let profile = registry.preset(name).ok()?;
    Some(registry.build(&profile, params).expect("a preset names built-in plugins"))
}
