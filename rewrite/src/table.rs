//! The work-list table a rewritten kernel reads: per-SM lists of logical TB ids.
//!
//! One flat array of little-endian `u32` words, in three parts:
//!
//! | words | contents |
//! |---|---|
//! | 0..16 | header (below) |
//! | 16..16+2S | per list `s`: `head`, `tail` (one 8-byte word each, changed by 64-bit atomics) |
//! | 16+2S..16+2S+N | the TB ids of every list, list after list |
//!
//! Header words: 0 lists `S`; 1-3 the logical grid `x`, `y`, `z`; 4 TBs `N`; 5 the format
//! version (1); 6 workers per list `W` (the schedule's TBs per SM); 7 the done flag; 8 the
//! workers that found nothing to take; 9-15 zero.
//!
//! `head` and `tail` are absolute indices into the ids: list `s` holds the ids
//! `head..tail` (empty when `head >= tail`: owners add 1 to `head` without looking first,
//! so it may pass `tail`). A worker on SM `m` takes from the head of list `m mod S`. A worker whose
//! list is empty steals one TB from the tail of the list with the most TBs left, when that
//! list has TBs *waiting*, more than its own SM's `W` workers can take at once (PAVER
//! Algorithm 2's donor; as every list has the same `W`, the list with the most TBs left is
//! the one with the most waiting). When no list has TBs waiting, the worker counts itself
//! in word 8 and leaves, except the last of the launch's workers, which takes what is left
//! wherever it is: a list whose SM never got a worker (a schedule for more SMs than the
//! GPU has) is still run, and on a GPU that runs every SM's workers that worker finds the
//! lists empty. The first worker to find every list empty sets the done flag, and later
//! ones leave at once. The kernel changes the table, so a host passes a fresh copy to each
//! launch, and launches the grid of workers `paver rewrite` states.

/// Words of the header.
pub const HEADER_WORDS: usize = 16;

/// The table's format version (header word 5).
pub const VERSION: u32 = 1;

/// Work lists over a logical grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkTable {
    /// The logical grid (`%nctaid` of the original launch).
    pub grid: [u32; 3],
    /// The lists, each in execution order; TB ids are `x + y*gx + z*gx*gy`.
    pub lists: Vec<Vec<u32>>,
    /// Workers that take from each list (the TBs per SM of the schedule): TBs beyond them
    /// are *waiting*, which stealing prefers.
    pub per_list: u32,
}

impl WorkTable {
    /// The plain order: one list of every TB in id order, which every worker shares, so TBs
    /// start in the order the hardware's dispatcher starts them (`paver rewrite
    /// --identity`, to measure what the worker loop itself costs).
    pub fn identity(grid: [u32; 3]) -> WorkTable {
        let n = grid.iter().map(|&d| u64::from(d)).product::<u64>();
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        WorkTable {
            grid,
            lists: vec![(0..n).collect()],
            per_list: 0,
        }
    }

    /// A schedule's groups (in global-queue order) dealt to `num_lists` lists round robin:
    /// group `g` to list `g mod num_lists`, which is the order PAVER's runtime hands groups
    /// to SMs when every SM drains its groups at the same pace (PAVER §5.3). `per_list`: the
    /// workers per SM.
    pub fn from_groups(
        groups: &[Vec<u32>],
        num_lists: u32,
        per_list: u32,
        grid: [u32; 3],
    ) -> WorkTable {
        let mut lists = vec![Vec::new(); num_lists.max(1) as usize];
        let n = lists.len();
        for (g, group) in groups.iter().enumerate() {
            lists[g % n].extend_from_slice(group);
        }
        WorkTable {
            grid,
            lists,
            per_list,
        }
    }

    /// The CTAs to launch on a GPU of `num_sms` SMs that holds `tbs_per_sm` of them each:
    /// one per TB context (at least one).
    pub fn workers(num_sms: u32, tbs_per_sm: u32) -> u32 {
        num_sms.saturating_mul(tbs_per_sm).max(1)
    }

    /// TBs over all lists.
    pub fn num_tbs(&self) -> usize {
        self.lists.iter().map(Vec::len).sum()
    }

    /// The table as `u32` words (see the module's documentation).
    pub fn words(&self) -> Vec<u32> {
        let s = self.lists.len();
        let n = self.num_tbs();
        let mut w = Vec::with_capacity(HEADER_WORDS + 2 * s + n);
        w.extend([
            s as u32,
            self.grid[0],
            self.grid[1],
            self.grid[2],
            n as u32,
            VERSION,
            self.per_list,
            0,
        ]);
        w.resize(HEADER_WORDS, 0);
        let mut at = 0u32;
        for l in &self.lists {
            w.push(at);
            at += l.len() as u32;
            w.push(at);
        }
        for l in &self.lists {
            w.extend_from_slice(l);
        }
        w
    }

    /// The table as little-endian bytes, as a host copies it to the GPU.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        self.words().iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// Checks that the lists hold every TB of the grid exactly once; the first TB missing
    /// or repeated otherwise.
    pub fn check(&self) -> Result<(), String> {
        let n = self.grid.iter().map(|&d| u64::from(d)).product::<u64>();
        let mut seen = vec![false; usize::try_from(n).map_err(|_| "grid too large")?];
        for &tb in self.lists.iter().flatten() {
            match seen.get_mut(tb as usize) {
                None => return Err(format!("TB {tb} is outside the grid of {n} TBs")),
                Some(true) => return Err(format!("TB {tb} is listed twice")),
                Some(s) => *s = true,
            }
        }
        match seen.iter().position(|s| !s) {
            Some(tb) => Err(format!("TB {tb} is in no list")),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_dealt_round_robin_and_laid_out_after_the_header() {
        let groups = vec![vec![0, 1], vec![4, 5], vec![2, 3], vec![6, 7], vec![8]];
        let t = WorkTable::from_groups(&groups, 2, 4, [3, 3, 1]);
        assert_eq!(t.lists, vec![vec![0, 1, 2, 3, 8], vec![4, 5, 6, 7]]);
        t.check().expect("complete");
        let w = t.words();
        assert_eq!(&w[..8], &[2, 3, 3, 1, 9, VERSION, 4, 0]);
        assert_eq!(&w[8..16], &[0; 8]);
        assert_eq!(
            &w[16..20],
            &[0, 5, 5, 9],
            "head/tail of each list, absolute"
        );
        assert_eq!(&w[20..], &[0, 1, 2, 3, 8, 4, 5, 6, 7]);
        assert_eq!(t.to_le_bytes().len(), 4 * w.len());
    }

    #[test]
    fn identity_is_one_list_in_id_order_and_check_finds_gaps() {
        let t = WorkTable::identity([2, 2, 2]);
        assert_eq!(t.lists, vec![(0..8).collect::<Vec<u32>>()]);
        t.check().expect("complete");
        let bad = WorkTable::from_groups(&[vec![0, 1, 1]], 1, 1, [3, 1, 1]);
        assert_eq!(bad.check().unwrap_err(), "TB 1 is listed twice");
        let short = WorkTable::from_groups(&[vec![0, 2]], 1, 1, [3, 1, 1]);
        assert_eq!(short.check().unwrap_err(), "TB 1 is in no list");
    }
}
