//! Name resolution of one function body: the names each `{ }` scope declares ([`Frame`]:
//! registers, register ranges such as `%r<30>`, local variables), and the lookups of
//! registers, labels and symbols through the scope chain, innermost scope first.

use super::{FnLower, FxMap};
use crate::ir::*;

/// Names declared in one `{ }` scope.
#[derive(Default)]
pub(super) struct Frame<'a> {
    pub(super) regs: FxMap<&'a str, RegId>,
    /// Register ranges by name, once there are more than [`Frame::LINEAR`].
    ranges: FxMap<&'a str, (u32, u32)>,
    /// Register ranges as a list, searched while there are at most [`Frame::LINEAR`]: a
    /// function declares a handful of ranges (`%p`, `%r`, `%rd`, `%f`, ...), and comparing a
    /// few short prefixes beats hashing them. Entries are `(prefix_key(name), name, first,
    /// count)`.
    range_list: Vec<(u64, &'a str, u32, u32)>,
    pub(super) locals: FxMap<&'a str, u32>,
}

impl<'a> Frame<'a> {
    /// Ranges up to this many are searched in `range_list`, more through `ranges`.
    const LINEAR: usize = 16;

    /// Declares range `name<n>` starting at register `first`; true if `name` was declared.
    /// Up to [`Frame::LINEAR`] ranges live in `range_list` only (no hashing); past that the
    /// map takes over, so many ranges cost no quadratic list search.
    pub(super) fn add_range(&mut self, name: &'a str, first: u32, n: u32) -> bool {
        if self.range_list.len() > Self::LINEAR {
            return self.ranges.insert(name, (first, n)).is_some();
        }
        let key = prefix_key(name);
        let dup = match self.range_list.iter_mut().find(|r| r.1 == name) {
            Some(r) => {
                *r = (key, name, first, n);
                true
            }
            None => {
                self.range_list.push((key, name, first, n));
                false
            }
        };
        if self.range_list.len() > Self::LINEAR {
            for r in &self.range_list {
                self.ranges.insert(r.1, (r.2, r.3));
            }
        }
        dup
    }

    /// The range with prefix `prefix`, whose [`prefix_key`] is `key`: `(first, count)`.
    #[inline]
    fn range(&self, prefix: &str, key: u64) -> Option<(u32, u32)> {
        if self.range_list.len() <= Self::LINEAR {
            let short = prefix.len() < 8;
            for r in &self.range_list {
                if r.0 == key && (short || r.1 == prefix) {
                    return Some((r.2, r.3));
                }
            }
            None
        } else {
            self.range_hashed(prefix)
        }
    }

    #[inline(never)]
    fn range_hashed(&self, prefix: &str) -> Option<(u32, u32)> {
        self.ranges.get(prefix).copied()
    }
}

/// A register prefix as one integer: its first 7 bytes and its length, equal for two
/// prefixes shorter than 8 bytes exactly when they are the same string.
#[inline]
fn prefix_key(s: &str) -> u64 {
    let b = s.as_bytes();
    let mut k = (b.len().min(255) as u64) << 56;
    let m = b.len().min(7);
    let mut i = 0;
    while i < m {
        k |= u64::from(b[i]) << (8 * i);
        i += 1;
    }
    k
}

impl<'a, 'm> FnLower<'a, 'm> {
    #[inline]
    pub(super) fn find_reg(&self, name: &str) -> Option<RegId> {
        if let Some(r) = self.find_reg_fast(name) {
            return Some(r);
        }
        self.find_reg_general(name)
    }

    /// The common case of [`FnLower::find_reg`] in one forward pass: a single scope with at
    /// most [`Frame::LINEAR`] ranges, and a name made of a 1-7 byte prefix without digits
    /// followed by 1-9 digits without a leading zero (`%rd17`). `None` means "not decided
    /// here": the general lookup then runs from scratch, so results cannot differ.
    #[inline]
    pub(super) fn find_reg_fast(&self, name: &str) -> Option<RegId> {
        let [fr] = self.frames.as_slice() else {
            return None;
        };
        if fr.range_list.len() > Frame::LINEAR {
            return None;
        }
        let b = name.as_bytes();
        let mut p = 0;
        let mut key = 0u64;
        while let Some(&c) = b.get(p) {
            if c.is_ascii_digit() || p == 7 {
                break;
            }
            key |= u64::from(c) << (8 * p);
            p += 1;
        }
        let digits = b.get(p..)?;
        if p == 0
            || digits.is_empty()
            || digits.len() > 9
            || (digits.len() > 1 && digits[0] == b'0')
        {
            return None;
        }
        let mut k = 0u32;
        for &c in digits {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            k = k * 10 + u32::from(d);
        }
        key |= (p as u64) << 56;
        let r = fr.range_list.iter().find(|r| r.0 == key)?;
        (k < r.3).then_some(RegId(r.2 + k))
    }

    /// [`FnLower::find_reg`] for any name and scope depth (out of line: keeps the fast path
    /// free of this one's register saves).
    #[inline(never)]
    fn find_reg_general(&self, name: &str) -> Option<RegId> {
        // Split `%rd17` into prefix `%rd` and index 17 (no leading zeros, fits u32).
        let b = name.as_bytes();
        let mut p = b.len();
        while p > 0 && b[p - 1].is_ascii_digit() {
            p -= 1;
        }
        let digits = b.len() - p;
        let k = if digits != 0 && digits <= 10 && (digits == 1 || b[p] != b'0') {
            let mut v = 0u64;
            for &d in &b[p..] {
                v = v * 10 + u64::from(d - b'0');
            }
            u32::try_from(v).ok()
        } else {
            None
        };
        let prefix = name.get(..p).unwrap_or("");
        let key = prefix_key(prefix);
        // Fast path: the usual single scope whose registers are all ranges.
        if let [fr] = self.frames.as_slice() {
            if let Some(k) = k {
                if let Some((first, n)) = fr.range(prefix, key) {
                    if k < n {
                        return Some(RegId(first + k));
                    }
                }
            }
            if fr.regs.is_empty() {
                return None;
            }
        }
        self.find_reg_slow(name, prefix, key, k)
    }

    /// [`FnLower::find_reg`] through every scope, innermost first.
    #[inline(never)]
    fn find_reg_slow(&self, name: &str, prefix: &str, key: u64, k: Option<u32>) -> Option<RegId> {
        for fr in self.frames.iter().rev() {
            if let Some(k) = k {
                if let Some((first, n)) = fr.range(prefix, key) {
                    if k < n {
                        return Some(RegId(first + k));
                    }
                }
            }
            if !fr.regs.is_empty() {
                if let Some(r) = fr.regs.get(name) {
                    return Some(*r);
                }
            }
        }
        None
    }

    fn scope_chain(&self) -> impl Iterator<Item = ScopeId> + '_ {
        self.scope_chain_from(self.cur_scope())
    }

    /// `scope` and its enclosing scopes, innermost first.
    pub(super) fn scope_chain_from(&self, scope: ScopeId) -> impl Iterator<Item = ScopeId> + '_ {
        let mut cur = Some(scope);
        std::iter::from_fn(move || {
            let s = cur?;
            cur = self.f.scopes.get(s.index()).and_then(|sc| sc.parent);
            Some(s)
        })
    }

    pub(super) fn find_label(&self, name: &'a str) -> Option<LabelId> {
        self.scope_chain()
            .find_map(|s| self.labels.get(&(s, name)).copied())
    }

    pub(super) fn find_symbol(&self, name: &'a str) -> Option<Symbol> {
        for fr in self.frames.iter().rev() {
            if let Some(i) = fr.locals.get(name) {
                return Some(Symbol::Local(*i));
            }
        }
        if let Some(s) = self.params.get(name) {
            return Some(*s);
        }
        if let Some(i) = self
            .scope_chain()
            .find_map(|s| self.directives.get(&(s, name)).copied())
        {
            return Some(Symbol::Directive(i));
        }
        if let Some(i) = self.names.globals.get(name) {
            return Some(Symbol::Global(*i));
        }
        self.names.functions.get(name).map(|i| Symbol::Function(*i))
    }
}
