//! The one list of each kind of mechanism that is chosen by name (the L1 replacement
//! policy, the prefetcher, the NUMA placement): each kind lists its values with their
//! names, aliases and descriptions once ([`Named::ALL`]); parsing, the names in errors and
//! the help texts read that list. (TB and warp policies, which are pluggable, have their
//! own registries: [`super::TB_POLICIES`], [`super::WARP_POLICIES`].)

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

/// A kind of mechanism chosen by name.
pub trait Named: Copy + PartialEq + Sized + 'static {
    /// What the help texts call the kind.
    const KIND: &'static str;
    /// Every value, in documentation order (the default first).
    const ALL: &'static [Entry<Self>];

    /// The value named `s` (a name or an alias, any case, `_` for `-`).
    fn parse(s: &str) -> Option<Self> {
        let s = s.to_ascii_lowercase().replace('_', "-");
        Self::ALL
            .iter()
            .find(|e| e.name == s || e.aliases.contains(&s.as_str()))
            .map(|e| e.value)
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
        let mut s = format!("{}:", Self::KIND);
        for e in Self::ALL {
            s.push_str(&format!("\n  {}: {}", e.name, e.description));
        }
        s
    }
}
