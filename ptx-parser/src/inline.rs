//! [`InlineVec`]: a fixed-capacity vector stored inline, used for instruction modifiers so
//! that parsing an instruction does not allocate for them.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// A vector of at most `N` `Copy` items stored inline. Dereferences to a slice.
#[derive(Clone, Copy)]
pub struct InlineVec<T: Copy + Default, const N: usize> {
    len: u8,
    items: [T; N],
}

impl<T: Copy + Default, const N: usize> InlineVec<T, N> {
    /// The capacity.
    pub const CAPACITY: usize = N;

    /// An empty vector.
    pub fn new() -> Self {
        Self {
            len: 0,
            items: [T::default(); N],
        }
    }
    /// Appends `v`; returns false (and drops it) when full.
    pub fn push(&mut self, v: T) -> bool {
        match self.items.get_mut(self.len as usize) {
            Some(slot) => {
                *slot = v;
                self.len += 1;
                true
            }
            None => false,
        }
    }
    /// True when no more items fit.
    pub fn is_full(&self) -> bool {
        self.len as usize >= N
    }
    /// The items as a slice.
    pub fn as_slice(&self) -> &[T] {
        self.items.get(..self.len as usize).unwrap_or(&[])
    }
}

impl<T: Copy + Default, const N: usize> Default for InlineVec<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default, const N: usize> Deref for InlineVec<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Copy + Default + PartialEq, const N: usize> PartialEq for InlineVec<T, N> {
    fn eq(&self, o: &Self) -> bool {
        self.as_slice() == o.as_slice()
    }
}

impl<T: Copy + Default + Eq, const N: usize> Eq for InlineVec<T, N> {}

impl<T: Copy + Default + Hash, const N: usize> Hash for InlineVec<T, N> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.as_slice().hash(h)
    }
}

impl<T: Copy + Default + fmt::Debug, const N: usize> fmt::Debug for InlineVec<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl<'a, T: Copy + Default, const N: usize> IntoIterator for &'a InlineVec<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<T: Copy + Default, const N: usize> FromIterator<T> for InlineVec<T, N> {
    /// Collects up to `N` items; the rest are dropped.
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v = Self::new();
        for x in iter {
            if !v.push(x) {
                break;
            }
        }
        v
    }
}

impl<T: Copy + Default + Serialize, const N: usize> Serialize for InlineVec<T, N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.as_slice())
    }
}

impl<'de, T: Copy + Default + Deserialize<'de>, const N: usize> Deserialize<'de>
    for InlineVec<T, N>
{
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Vec::<T>::deserialize(d)?;
        if v.len() > N {
            return Err(serde::de::Error::invalid_length(
                v.len(),
                &"at most the inline capacity",
            ));
        }
        Ok(v.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_until_full() {
        let mut v: InlineVec<u8, 2> = InlineVec::new();
        assert!(v.push(1) && v.push(2));
        assert!(!v.push(3));
        assert!(v.is_full());
        assert_eq!(&v[..], &[1, 2]);
    }
}
