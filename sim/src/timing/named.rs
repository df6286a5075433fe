//! The one list of each kind of mechanism that is chosen by name (the L1 replacement
//! policy, the prefetcher, the NUMA placement): each kind lists its values with their
//! names, aliases and descriptions once ([`Named::ALL`]); parsing, the names in errors and
//! the help texts read that list. TB and warp policies, which are pluggable, have registries
//! of their own ([`super::TB_POLICIES`], [`super::WARP_POLICIES`]) read through the same
//! [`find`] and [`help`].

/// One value of a kind chosen by name.
pub struct Entry<T: 'static> {
    /// The value.
    pub value: T,
    /// Its name on the command line, in `--set` values and plans.
    pub name: &'static str,
    /// Other spellings accepted.
    pub aliases: &'static [&'static str],
    /// One line for the help texts.
    pub description: &'static str,
}

/// Something listed by name: a value of a [`Named`] kind, a TB or warp policy's info.
pub trait Listed: 'static {
    /// Its name.
    fn name(&self) -> &'static str;
    /// Other spellings accepted.
    fn aliases(&self) -> &'static [&'static str];
    /// One line for the help texts.
    fn description(&self) -> &'static str;
}

/// [`Listed`]'s methods for a type with `name`, `aliases` and `description` fields.
macro_rules! listed_by_fields {
    () => {
        fn name(&self) -> &'static str {
            self.name
        }
        fn aliases(&self) -> &'static [&'static str] {
            self.aliases
        }
        fn description(&self) -> &'static str {
            self.description
        }
    };
}
pub(crate) use listed_by_fields;

impl<T: 'static> Listed for Entry<T> {
    listed_by_fields!();
}

/// The item of `all` named `s` (a name or an alias, any case, `_` for `-`).
pub fn find<'a, T: Listed>(all: impl IntoIterator<Item = &'a T>, s: &str) -> Option<&'a T> {
    let s = s.to_ascii_lowercase().replace('_', "-");
    all.into_iter()
        .find(|e| e.name() == s || e.aliases().contains(&s.as_str()))
}

/// `kind:` and a line per item of `all` with its name and description.
pub fn help<'a, T: Listed>(kind: &str, all: impl IntoIterator<Item = &'a T>) -> String {
    let mut s = format!("{kind}:");
    for e in all {
        s.push_str(&format!("\n  {}: {}", e.name(), e.description()));
    }
    s
}

/// For a registry's info type `$info` (with `name`, `aliases`, `description` fields) and its
/// handle `$handle` (a newtype over `&'static $info`): [`Listed`] for the info, and equality
/// and `Debug` of handles by name.
macro_rules! registry_handle {
    ($handle:ident, $info:ident) => {
        impl $crate::timing::named::Listed for $info {
            $crate::timing::named::listed_by_fields!();
        }

        impl PartialEq for $handle {
            fn eq(&self, other: &$handle) -> bool {
                self.0.name == other.0.name
            }
        }

        impl Eq for $handle {}

        impl std::fmt::Debug for $handle {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0.name)
            }
        }
    };
}
pub(crate) use registry_handle;

/// A kind of mechanism chosen by name.
pub trait Named: Copy + PartialEq + Sized + 'static {
    /// What the help texts call the kind.
    const KIND: &'static str;
    /// Every value, in documentation order (the default first).
    const ALL: &'static [Entry<Self>];

    /// The value named `s` (a name or an alias, any case, `_` for `-`).
    fn parse(s: &str) -> Option<Self> {
        find(Self::ALL, s).map(|e| e.value)
    }

    /// Its name.
    fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|e| e.value == self)
            .map_or("?", |e| e.name)
    }

    /// Every name, in [`Named::ALL`] order.
    fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|e| e.name).collect()
    }

    /// The help text: each name with its description.
    fn help() -> String {
        help(Self::KIND, Self::ALL)
    }
}
