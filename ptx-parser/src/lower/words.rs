//! The per-module cache of instruction words (`ld.param.u64` -> opcode and modifiers), so
//! each distinct word is split and parsed once.

use super::FxMap;
use crate::opcode::{Modifiers, Opcode};
use std::sync::Arc;

/// Opcode, modifiers and "too many modifiers" of an instruction word, cached per module:
/// a kernel uses a few dozen distinct words (`ld.param.u64`, `mov.u32`, ...) many times.
///
/// Words of up to 16 bytes (nearly all) are found through a direct-mapped table keyed by
/// their bytes as two integers, without hashing the string or comparing it byte by byte;
/// the hash map holds every cached word.
#[derive(Default)]
pub(super) struct WordCache {
    map: FxMap<Box<str>, u32>,
    pub(super) entries: Vec<(Opcode, Arc<Modifiers>, bool)>,
    /// `FRONT` slots of `(first 8 bytes, next 8 bytes, length << 32 | entry + 1)`, zero-padded.
    front: Vec<(u64, u64, u64)>,
}

impl WordCache {
    const FRONT: usize = 256;

    /// The key of a word of at most 16 bytes, and its slot in `front`.
    #[inline]
    pub(super) fn key(word: &[u8]) -> Option<(u64, u64, usize)> {
        if word.len() > 16 {
            return None;
        }
        let mut a = [0u8; 16];
        a[..word.len()].copy_from_slice(word);
        Self::key_of(&a, word.len())
    }

    /// [`WordCache::key`] of the word of `len` bytes at the start of `bytes`, which holds at
    /// least 16 bytes (no copy).
    #[inline]
    pub(super) fn key_at(bytes: &[u8], len: usize) -> Option<(u64, u64, usize)> {
        if len > 16 {
            return None;
        }
        let a: &[u8; 16] = bytes.get(..16)?.try_into().ok()?;
        Self::key_of(a, len)
    }

    #[inline]
    fn key_of(a: &[u8; 16], len: usize) -> Option<(u64, u64, usize)> {
        let (lo, hi) = a.split_at(8);
        let mut lo = u64::from_le_bytes(lo.try_into().ok()?);
        let mut hi = u64::from_le_bytes(hi.try_into().ok()?);
        // Keep the word's bytes only (the rest are zero after `key`'s copy anyway).
        let mask = |n: usize| {
            if n >= 8 {
                u64::MAX
            } else {
                (1u64 << (8 * n)) - 1
            }
        };
        lo &= mask(len);
        hi &= mask(len.saturating_sub(8));
        let h = (lo ^ hi.rotate_left(29) ^ len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Some((lo, hi, (h >> 56) as usize))
    }

    /// The cached entry of `word`.
    #[inline]
    pub(super) fn get(&mut self, word: &str) -> Option<&(Opcode, Arc<Modifiers>, bool)> {
        let idx = self.find(word)?;
        self.entries.get(idx)
    }

    /// The index in `entries` of `word`.
    #[inline]
    fn find(&mut self, word: &str) -> Option<usize> {
        self.find_keyed(word, Self::key(word.as_bytes()))
    }

    /// [`WordCache::find`] with the word's key already computed.
    #[inline]
    pub(super) fn find_keyed(
        &mut self,
        word: &str,
        key: Option<(u64, u64, usize)>,
    ) -> Option<usize> {
        if let Some((lo, hi, slot)) = key {
            if let Some(&(l, h, tag)) = self.front.get(slot) {
                if l == lo && h == hi && (tag >> 32) as usize == word.len() && tag as u32 != 0 {
                    return Some(tag as u32 as usize - 1);
                }
            }
        }
        let idx = *self.map.get(word)?;
        if let Some((lo, hi, slot)) = key {
            self.remember(lo, hi, word.len(), slot, idx);
        }
        Some(idx as usize)
    }

    fn remember(&mut self, lo: u64, hi: u64, len: usize, slot: usize, idx: u32) {
        if self.front.is_empty() {
            self.front = vec![(0, 0, 0); Self::FRONT];
        }
        if let Some(f) = self.front.get_mut(slot) {
            *f = (lo, hi, (len as u64) << 32 | u64::from(idx + 1));
        }
    }

    /// Caches `word` (unless the cache is full).
    pub(super) fn insert(&mut self, word: &str, entry: (Opcode, Arc<Modifiers>, bool)) {
        if self.entries.len() >= MAX_CACHED_WORDS {
            return;
        }
        let idx = self.entries.len() as u32;
        self.entries.push(entry);
        self.map.insert(word.into(), idx);
        if let Some((lo, hi, slot)) = Self::key(word.as_bytes()) {
            self.remember(lo, hi, word.len(), slot, idx);
        }
    }
}

/// Most distinct instruction words cached (bounds memory on adversarial input).
const MAX_CACHED_WORDS: usize = 4096;
