//! The L1 prefetchers (`--prefetch next-line|ld`; seed paper 004 §4.5, Figure 11).
//!
//! A prefetch is triggered by a demand read miss in the L1 (`Outcome::Miss`, not a merge)
//! and is a real read request: it takes an L1 MSHR (with no waiter, so it never blocks a
//! warp), crosses the interconnect, the L2 and DRAM like a miss, and fills the L1 on its
//! return. It is dropped when no MSHR is free, and not sent when its block is present, in
//! flight, or one the L1 would bypass ([`super::cache::Cache::prefetch`]).
//!
//! Targets (`block` is the missed block: a 32 B sector of a sectored L1, else the line):
//!
//! - `next-line`: `block + line` for every miss (the block at the same offset of the next
//!   line: a warp missing a whole line of sectors prefetches the whole next line).
//! - `ld`: INTER-THREAD structures only. NEARBY: the next line, as above. COACCESSED with a
//!   REGULAR pattern: `block + (L1_size / (active_tiles × tile_width)) × stride`, where
//!   `stride` is the descriptor's stride (the distance between a D-Tile's rows) in bytes,
//!   `tile_width` the bytes of a D-Tile row (`d_tile[0] × element_bytes`: "the number of
//!   bytes that are accessed at the same time"), and `active_tiles` the number of distinct
//!   C-Tiles among the TBs resident on the SM (with the 1:1 C-Tile/D-Tile mapping, the
//!   D-Tiles the SM is working on, hence the prefetcher is prefetching). The quotient is
//!   taken in whole rows (integer division): the L1's share of one active tile, in tile
//!   rows. A distance of zero rows, a structure without a stride, or a target outside the
//!   structure sends nothing. Everything else (IRREGULAR COACCESSED, INTRA-THREAD,
//!   NO-REUSE, UNDECIDED, no descriptor): no prefetch.
//!
//! **Guidance** (`ld.prefetch_guide`, [`PrefetchGuide`]; `ld` only). §4.5 prefetches "the
//! critical data", "only prefetching data that is shared by many threads", and counts as
//! active "the D-Tiles that the prefetcher is actively prefetching": the text gives the
//! target address but does not say whether a target outside those D-Tiles is sent. We read
//! it as not (`tiles`, the default): a target is sent only when it lies in the D-Tile of
//! the C-Tile of a TB resident on the SM (the analysis's C-Tile -> D-Tile map,
//! [`super::hints::StructureHint::in_d_tile`]); otherwise it is counted in
//! `prefetches_unguided` and not sent. Without that filter a NEARBY next-line target is,
//! on a stencil whose TB rows are narrower than a line (hotspot, srad: 16 threads x 4 B),
//! the row of a TB two columns over, which runs on another SM: 0 of 144,133 such
//! prefetches were used on a 2,304-TB hotspot (docs/EXPLAIN.md). `off` sends every
//! target, the text's address function alone.
//!
//! **Throttle** (`ld.prefetch_window`, `ld.prefetch_accuracy_pct`; `ld` only; [`Throttle`]).
//! The paper calls its prefetching "controlled" and "of high accuracy" but has no feedback
//! loop; its own results show prefetching alone hurting bandwidth-bound kernels (§5.2: LIB,
//! LMD, SPMV). We add the accuracy feedback of feedback-directed prefetching (Srinath,
//! Mutlu, Kim and Patt, HPCA 2007): accuracy = used prefetches / sent prefetches over an
//! interval, a prefetch counting as used when a demand read hits its block or merges into
//! it in flight (FDP counts a late prefetch as accurate), and as wasted when its block is
//! evicted before any use. FDP's thresholds are 40 % (low)
//! and 75 % (high) and its interval 8,192 L2 evictions; its 5 aggressiveness levels have
//! no counterpart here (our prefetcher sends one block at one distance), so only the low
//! threshold is used: a window closes once the fate of `prefetch_window` (default
//! [`DEFAULT_PREFETCH_WINDOW`]) prefetches of the L1 is known (used or wasted), and when
//! fewer than `prefetch_accuracy_pct` % (default [`DEFAULT_ACCURACY_PCT`], FDP's A_low) of
//! them were used, the prefetcher sends nothing for its next `prefetch_window` triggers (read
//! misses with a target; counted in `prefetches_throttled`), then starts a fresh window.
//! FDP divides by prefetches *sent* over a long interval; over our short windows the uses
//! lag the sends (a burst of strided prefetches is used hundreds of cycles later: syrk's
//! 640 prefetches were all used, yet a sent-based window of 32 judged them useless), so the
//! denominator is the prefetches whose fate is known. The window is in prefetches, not FDP's
//! evictions, and short: a corpus launch sends tens to hundreds of prefetches per SM, FDP's
//! interval is for SPEC runs of hundreds of millions of instructions. `prefetch_window = 0`
//! turns the throttle off.

use super::hints::{LocalityHints, LocalityType, Sharing};
use serde::{Deserialize, Serialize};

/// The L1 prefetcher (`--prefetch`, key `ld.prefetch`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrefetchPolicy {
    /// No prefetching.
    #[default]
    None,
    /// The next line on every L1 read miss.
    NextLine,
    /// The Locality Descriptor's guided prefetcher (§4.5).
    Ld,
}

impl super::named::Named for PrefetchPolicy {
    const KIND: &'static str = "L1 prefetcher on read misses";
    const ALL: &'static [super::named::Entry<PrefetchPolicy>] = &[
        super::named::Entry {
            value: PrefetchPolicy::None,
            name: "none",
            aliases: &[],
            description: "no prefetching",
        },
        super::named::Entry {
            value: PrefetchPolicy::NextLine,
            name: "next-line",
            aliases: &[],
            description: "the next line on every L1 read miss",
        },
        super::named::Entry {
            value: PrefetchPolicy::Ld,
            name: "ld",
            aliases: &[],
            description: "the Locality Descriptor's §4.5: INTER-THREAD NEARBY -> next line, \
                          COACCESSED REGULAR -> strided (stats key `ld`)",
        },
    ];
}

/// Where the `ld` prefetcher may send a target (`ld.prefetch_guide`; see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrefetchGuide {
    /// Only into the D-Tile of a resident TB's C-Tile.
    #[default]
    Tiles,
    /// Anywhere in the structure (§4.5's address function alone).
    Off,
}

impl super::named::Named for PrefetchGuide {
    const KIND: &'static str = "where the ld prefetcher may send a target";
    const ALL: &'static [super::named::Entry<PrefetchGuide>] = &[
        super::named::Entry {
            value: PrefetchGuide::Tiles,
            name: "tiles",
            aliases: &[],
            description: "only into the D-Tile of the C-Tile of a TB resident on the SM",
        },
        super::named::Entry {
            value: PrefetchGuide::Off,
            name: "off",
            aliases: &[],
            description: "anywhere in the structure (the address function alone)",
        },
    ];
}

/// The throttle's window by default, in prefetches sent per L1 (see the module doc).
pub const DEFAULT_PREFETCH_WINDOW: u64 = 32;

/// The throttle's accuracy threshold by default, in percent: FDP's A_low (Srinath et al.,
/// HPCA 2007, §3.3: 0.40).
pub const DEFAULT_ACCURACY_PCT: u64 = 40;

/// The accuracy throttle of one L1 (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Throttle {
    window: u64,
    pct: u64,
    /// Prefetches of the window whose fate is known (used, or evicted unused).
    sent: u64,
    used: u64,
    /// Read misses left in an off period.
    off_left: u64,
}

impl Throttle {
    /// A throttle with windows of `window` prefetches (0: never throttles) and threshold
    /// `pct` %.
    pub fn new(window: u64, pct: u64) -> Throttle {
        Throttle {
            window,
            pct,
            sent: 0,
            used: 0,
            off_left: 0,
        }
    }

    /// A read miss would trigger a prefetch: whether the throttle lets it (`false` uses up
    /// one miss of the off period).
    pub fn allows(&mut self) -> bool {
        if self.off_left == 0 {
            return true;
        }
        self.off_left -= 1;
        false
    }

    /// A prefetched block was evicted before any demand used it.
    pub fn on_wasted(&mut self) {
        self.resolve(false);
    }

    /// A prefetched block was used (a demand hit or merge).
    pub fn on_used(&mut self) {
        self.resolve(true);
    }

    /// One more prefetch's fate is known; closes the window after `window` of them.
    fn resolve(&mut self, used: bool) {
        if self.window == 0 || self.off_left > 0 {
            return;
        }
        self.sent += 1;
        self.used += u64::from(used);
        if self.sent >= self.window {
            if self.used * 100 < self.pct * self.sent {
                self.off_left = self.window;
            }
            self.sent = 0;
            self.used = 0;
        }
    }

    /// Whether an off period is running.
    pub fn is_off(&self) -> bool {
        self.off_left > 0
    }
}

/// Whether the D-Tile of the C-Tile of one of the TBs `resident` holds the `len` bytes at
/// `addr` (the guided prefetcher's prediction of use; no descriptor: no).
pub(crate) fn predicted(
    hints: &LocalityHints,
    addr: u64,
    len: u64,
    grid: [u64; 3],
    resident: impl Iterator<Item = u32>,
) -> bool {
    let Some(h) = hints.of_addr(addr) else {
        return false;
    };
    let mut seen: Vec<u64> = Vec::new();
    for tb in resident {
        let c = h.c_tile_of(tb, grid);
        if seen.contains(&c) {
            continue;
        }
        if h.in_d_tile(c, addr, len) {
            return true;
        }
        seen.push(c);
    }
    false
}

/// What [`super::cache::Cache::prefetch`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prefetch {
    /// An MSHR was taken: the caller sends the read.
    Issued,
    /// No MSHR free: nothing sent.
    Dropped,
    /// Present, in flight, or bypassed: nothing sent.
    Unneeded,
}

/// The distinct C-Tiles of the TBs `resident` (linear ids, x fastest) in a grid of `grid`
/// TBs with C-Tiles of `c_tile` TBs: at least 1.
fn active_tiles(grid: [u64; 3], c_tile: [u64; 3], resident: impl Iterator<Item = u32>) -> u64 {
    let mut seen: Vec<[u64; 3]> = Vec::new();
    let (gx, gy) = (grid[0].max(1), grid[1].max(1));
    for tb in resident {
        let t = u64::from(tb);
        let xyz = [t % gx, (t / gx) % gy, t / (gx * gy)];
        let c = [
            xyz[0] / c_tile[0].max(1),
            xyz[1] / c_tile[1].max(1),
            xyz[2] / c_tile[2].max(1),
        ];
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    (seen.len() as u64).max(1)
}

/// The block to prefetch after a demand miss of `block` (see the module doc).
pub(crate) fn target(
    policy: PrefetchPolicy,
    hints: &LocalityHints,
    block: u64,
    line: u64,
    l1_bytes: u64,
    grid: [u64; 3],
    resident: impl Iterator<Item = u32>,
) -> Option<u64> {
    match policy {
        PrefetchPolicy::None => None,
        PrefetchPolicy::NextLine => block.checked_add(line),
        PrefetchPolicy::Ld => {
            let h = hints.of_addr(block)?;
            let d = &h.descriptor;
            if d.locality_type != LocalityType::InterThread {
                return None;
            }
            let t = match d.sharing? {
                Sharing::Nearby => block.checked_add(line)?,
                Sharing::Coaccessed if d.is_regular() => {
                    let stride = d.stride_elements? * d.element_bytes;
                    let width = d.d_tile[0] * d.element_bytes;
                    let active = active_tiles(grid, d.c_tile, resident);
                    let rows = l1_bytes / active.checked_mul(width).filter(|&w| w > 0)?;
                    if rows == 0 || stride == 0 {
                        return None;
                    }
                    block.checked_add(rows.checked_mul(stride)?)?
                }
                Sharing::Coaccessed => return None,
            };
            (hints.of_addr(t).map(|o| o.region) == Some(h.region)).then_some(t)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::hints::{Descriptor, Pattern, StructureHint};

    fn hint(locality: LocalityType, sharing: Option<Sharing>, regular: bool) -> StructureHint {
        let descriptor = Descriptor {
            param: 0,
            name: None,
            element_bytes: 4,
            locality_type: locality,
            priority: 1,
            sharing,
            pattern: if regular {
                Pattern::Regular
            } else {
                Pattern::Irregular
            },
            stride_elements: Some(1024),
            d_tile: [64, 16, 1],
            c_tile: [1, 4, 1],
            compute_data_map: [1, 0, 0],
            compute_data_rank: [1, 0, 0],
        };
        StructureHint::new(descriptor, Some(1 << 24))
    }

    fn hints(h: StructureHint) -> LocalityHints {
        let mut l = LocalityHints::default();
        l.insert(h);
        l
    }

    #[test]
    fn next_line_is_one_line_on() {
        let l = LocalityHints::default();
        let b = 0x1_0000_0020;
        let t = target(
            PrefetchPolicy::NextLine,
            &l,
            b,
            128,
            32768,
            [1, 1, 1],
            [].into_iter(),
        );
        assert_eq!(t, Some(0x1_0000_00a0));
        assert_eq!(
            target(
                PrefetchPolicy::None,
                &l,
                b,
                128,
                32768,
                [1, 1, 1],
                [].into_iter()
            ),
            None
        );
    }

    #[test]
    fn ld_nearby_is_next_line_and_others_get_nothing() {
        // The `ld` target of a read miss at `block`: 128 B lines, a 32 KB L1, a 4 x 4 grid,
        // TB 0 resident.
        let ld_target = |l: &LocalityHints, block| {
            target(
                PrefetchPolicy::Ld,
                l,
                block,
                128,
                32768,
                [4, 4, 1],
                [0].into_iter(),
            )
        };
        let base = launch::bind::buffer_base(0);
        let l = hints(hint(
            LocalityType::InterThread,
            Some(Sharing::Nearby),
            false,
        ));
        let t = ld_target(&l, base + 256);
        assert_eq!(t, Some(base + 384));
        for (loc, sh, reg) in [
            (LocalityType::InterThread, Some(Sharing::Coaccessed), false),
            (LocalityType::IntraThread, None, true),
            (LocalityType::NoReuse, None, true),
            (LocalityType::Undecided, None, true),
        ] {
            let l = hints(hint(loc, sh, reg));
            let t = ld_target(&l, base + 256);
            assert_eq!(t, None, "{loc:?} {sh:?} regular={reg}");
        }
        // No descriptor for the address.
        let t = ld_target(&l, launch::bind::buffer_base(3));
        assert_eq!(t, None);
    }

    /// COACCESSED + REGULAR: by hand, tile width 64 x 4 B = 256 B, stride 1024 x 4 B = 4096
    /// B. Grid 4 x 8 with C-Tiles of 1 x 4 TBs: TBs 0 (x0 y0), 4 (x0 y1) share C-Tile
    /// (0, 0); TB 1 (x1 y0) is C-Tile (1, 0); TB 17 (x1 y4) is C-Tile (1, 1). With a 32 KB
    /// L1: one active tile -> 32768 / 256 = 128 rows ahead = 524288 B; three active tiles
    /// -> 32768 / 768 = 42 rows = 172032 B.
    #[test]
    fn strided_distance_by_hand() {
        let base = launch::bind::buffer_base(0);
        let l = hints(hint(
            LocalityType::InterThread,
            Some(Sharing::Coaccessed),
            true,
        ));
        let go = |tbs: &[u32]| {
            target(
                PrefetchPolicy::Ld,
                &l,
                base,
                128,
                32768,
                [4, 8, 1],
                tbs.iter().copied(),
            )
        };
        assert_eq!(go(&[0, 4]), Some(base + 524_288));
        assert_eq!(go(&[0, 4, 1, 17]), Some(base + 172_032));
        assert_eq!(go(&[]), Some(base + 524_288), "at least one tile");
        // Beyond the structure's 16 MB: nothing.
        let far = base + (1 << 24) - 4096;
        let t = target(
            PrefetchPolicy::Ld,
            &l,
            far,
            128,
            32768,
            [4, 8, 1],
            [0].into_iter(),
        );
        assert_eq!(t, None);
    }

    /// Guidance by hand: a 4 x 2 grid, 1 x 1 C-Tiles (map [1, 1, 0]), 4 B elements. TB 1's
    /// D-Tile is elements 0..64 (bytes 0..256, lines 0 and 1 of 128 B); TB 3's is elements
    /// 64..96 (line 2, bytes 256..384). With TB 1 resident, line 1 is predicted, line 2
    /// (TB 3's, on another SM) is not; with TBs 1 and 3 resident, both are.
    #[test]
    fn guidance_sends_only_into_resident_d_tiles() {
        let mut h = hint(LocalityType::InterThread, Some(Sharing::Nearby), true);
        h.descriptor.c_tile = [1, 1, 1];
        let mut d_tiles = vec![Vec::new(); 8];
        d_tiles[1] = vec![[0, 64]];
        d_tiles[3] = vec![[64, 96]];
        let l = hints(h.with_tiles(crate::timing::hints::TileMap { d_tiles }));
        let base = launch::bind::buffer_base(0);
        let go = |addr, tbs: &[u32]| predicted(&l, addr, 128, [4, 2, 1], tbs.iter().copied());
        assert!(go(base + 128, &[1]));
        assert!(!go(base + 256, &[1]), "TB 3's line, TB 3 not resident");
        assert!(go(base + 256, &[1, 3]));
        assert!(!go(base + 384, &[1, 3]), "in no D-Tile");
        assert!(!go(base + 128, &[]), "no TB resident");
        assert!(!go(launch::bind::buffer_base(3), &[1]), "no descriptor");
    }

    /// The throttle by hand, window 4 at 40 %: of 4 resolved prefetches 1 used (25 % < 40
    /// %) -> off for the next 4 triggers, then on again; a window with 2 of 4 used (50 %)
    /// keeps it on, and exactly 40 % (2 of 5) too.
    #[test]
    fn throttle_stops_below_the_threshold_and_recovers() {
        let mut t = Throttle::new(4, 40);
        t.on_used();
        (0..3).for_each(|_| t.on_wasted());
        assert!(t.is_off());
        for _ in 0..4 {
            t.on_used(); // fates during the off period do not count
            assert!(!t.allows(), "off for one window of triggers");
        }
        assert!(t.allows(), "recovers after the window");
        t.on_wasted();
        t.on_used();
        t.on_wasted();
        t.on_used();
        assert!(!t.is_off(), "2 of 4 = 50 % >= 40 %");
        assert!(t.allows());
        let mut t = Throttle::new(5, 40);
        (0..2).for_each(|_| t.on_used());
        (0..3).for_each(|_| t.on_wasted());
        assert!(!t.is_off(), "2 of 5 = 40 %, not below");
        // Window 0: never off.
        let mut t = Throttle::new(0, 40);
        (0..100).for_each(|_| t.on_wasted());
        assert!(t.allows());
    }
}
