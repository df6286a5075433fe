//! Runs of units, what a walk produces: arithmetic runs per warp, their normalisation and
//! expansion into intervals, the per-TB [`Class`] built from them, and the [`Sink`] that
//! collects one load's runs and byte ranges under the memory allowance.

use super::*;

/// One run of units of a parameter: `(param, start, stride, count)`; with `stride == 1`
/// the interval `[start, start + count)`, else the points `start + k * stride`, `k < count`.
pub(super) type Run = (u32, u64, u64, u64);

/// Per warp of one TB, the runs one load reads (sorted, deduplicated, stride-1 runs merged).
pub(super) type WarpRuns = Vec<Vec<Run>>;
/// Byte ranges `(data structure, lo, hi)` one evaluation read.
pub(super) type Ranges = Vec<(u32, u64, u64)>;
/// What one job (one load in one TB) gives: its runs and byte ranges, or why not.
pub(super) type JobResult = Result<(WarpRuns, Ranges), String>;

/// Sorts and deduplicates runs, merging overlapping or adjacent intervals of one parameter.
pub(super) fn normalize_runs(mut rs: Vec<Run>) -> Vec<Run> {
    for r in &mut rs {
        if r.3 <= 1 {
            r.2 = 1;
        }
    }
    rs.sort_unstable();
    rs.dedup();
    let (mut ivs, pts): (Vec<Run>, Vec<Run>) = rs.into_iter().partition(|r| r.2 == 1);
    let mut out: Vec<Run> = Vec::with_capacity(ivs.len() + pts.len());
    for (p, a, _, n) in ivs.drain(..) {
        match out.last_mut() {
            Some(l) if l.0 == p && a <= l.1 + l.3 => l.3 = l.3.max(a + n - l.1),
            _ => out.push((p, a, 1, n)),
        }
    }
    out.extend(pts);
    out.sort_unstable();
    out
}

/// Appends the units of `r` as intervals.
fn expand(r: &Run, out: &mut Vec<Interval>) {
    let &(_, a, st, n) = r;
    if st == 1 {
        out.push((a, a + n));
    } else {
        out.extend((0..n).map(|k| (a + k * st, a + k * st + 1)));
    }
}

/// The class of one TB for one parameter from the runs of each warp: units, and units read
/// by two or more warps. A run read by several warps is expanded once.
pub(super) fn class_from_runs(warps: &[Vec<Run>]) -> Class {
    let mut all: Vec<(&Run, u32)> = Vec::new();
    for (w, rs) in warps.iter().enumerate() {
        all.extend(rs.iter().map(|r| (r, w as u32)));
    }
    all.sort_unstable();
    // Runs of several warps (counted twice) and runs of one warp (by warp).
    let mut multi: Vec<Interval> = Vec::new();
    let mut single: Vec<(u32, &Run)> = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let mut j = i + 1;
        while j < all.len() && all[j].0 == all[i].0 {
            j += 1;
        }
        if j - i >= 2 {
            expand(all[i].0, &mut multi);
        } else {
            single.push((all[i].1, all[i].0));
        }
        i = j;
    }
    let multi = normalize(multi);
    let mut units = multi.clone();
    let multi_warp = if single.is_empty() {
        multi
    } else {
        single.sort_unstable();
        let mut lists: Vec<Vec<Interval>> = vec![multi.clone(), multi];
        let mut k = 0;
        while k < single.len() {
            let w = single[k].0;
            let mut v = Vec::new();
            while k < single.len() && single[k].0 == w {
                expand(single[k].1, &mut v);
                k += 1;
            }
            let v = normalize(v);
            units.extend_from_slice(&v);
            lists.push(v);
        }
        units = normalize(units);
        covered_twice(&lists)
    };
    Class {
        units,
        multi_warp,
        members: Vec::new(),
    }
}

pub(super) struct Sink<'a> {
    pub(super) launch: &'a BoundLaunch,
    pub(super) gran: Granularity,
    pub(super) width: u64,
    pub(super) runs: Vec<Vec<Run>>,
    pub(super) warp: usize,
    pub(super) allow: &'a Allowance<'a>,
    /// Bytes recorded since the last [`Sink::flush`].
    pub(super) pending: u64,
    /// Bytes read per data structure (`NO_BUFFER` for addresses in none).
    pub(super) ranges: Vec<(u32, u64, u64)>,
}

impl Sink<'_> {
    fn push(&mut self, r: Run) -> Result<(), EvalError> {
        self.pending += run_bytes(&r);
        self.runs[self.warp].push(r);
        if self.pending >= 1 << 16 {
            self.flush()?;
        }
        Ok(())
    }
    /// Charges the pending bytes to the load's allowance.
    pub(super) fn flush(&mut self) -> Result<(), EvalError> {
        let now = self.allow.spent.fetch_add(self.pending, Ordering::Relaxed) + self.pending;
        self.pending = 0;
        if now > self.allow.limit {
            return Err(EvalError::Budget);
        }
        Ok(())
    }
    fn unit_of(&self, a: i128) -> Result<(u32, u64, u64), EvalError> {
        let Ok(addr) = u64::try_from(a) else {
            return Err(EvalError::Unknown(Reason::Unsupported(format!(
                "address {a:#x} outside the 64-bit address space"
            ))));
        };
        // The data structure that contains the address, or none (`NO_BUFFER`, the offset
        // is then the address itself).
        let Some((p, off)) = self.launch.buffer_at(addr) else {
            return Ok((NO_BUFFER, 1, addr));
        };
        let ub = unit_bytes(self.gran, self.launch, p as u32, self.width);
        Ok((p as u32, ub, off))
    }
    /// Records accesses at the addresses `vals` (up to a warp's worth of one thread's
    /// iterations), in any order. A footprint is a set, so the values are sorted, deduplicated
    /// and recorded as arithmetic runs ([`Sink::ap`]): mirror_boundary's reflecting index is
    /// one or two runs per 32 iterations where it was 32 points. A run whose ends are not in
    /// one buffer (or in none) is recorded point by point, as is every value when one is
    /// outside the address space (the error then names the same address as a walk in
    /// iteration order would).
    pub(super) fn points(&mut self, vals: &mut [i128]) -> Result<(), EvalError> {
        if vals.len() < 3 || vals.iter().any(|&a| u64::try_from(a).is_err()) {
            return vals.iter().try_for_each(|&a| self.ap(a, 0, 1));
        }
        let buffer = |a: i128| {
            u64::try_from(a)
                .ok()
                .and_then(|a| self.launch.buffer_at(a))
                .map(|b| b.0)
        };
        // Already one non-decreasing run in the order given (a warp row's consecutive
        // elements, an address every lane shares): what the sort below would find.
        let (a0, last) = (vals[0], vals[vals.len() - 1]);
        let c = vals[1] - a0;
        if c >= 0 && vals.windows(2).all(|w| w[1] - w[0] == c) {
            if c == 0 {
                return self.ap(a0, 0, 1);
            }
            if buffer(a0).is_some() && buffer(a0) == buffer(last + self.width as i128 - 1) {
                return self.ap(a0, c, vals.len() as i128);
            }
        }
        vals.sort_unstable();
        let mut m = 1;
        for i in 1..vals.len() {
            if vals[i] != vals[m - 1] {
                vals[m] = vals[i];
                m += 1;
            }
        }
        let v = &vals[..m];
        let mut i = 0;
        while i < m {
            let mut j = i + 1;
            if j < m {
                let c = v[j] - v[i];
                while j + 1 < m && v[j + 1] - v[j] == c {
                    j += 1;
                }
                j += 1;
            }
            // `v[i .. j]` is one arithmetic run.
            let (a0, last) = (v[i], v[j - 1]);
            let end = last + self.width as i128 - 1;
            if j - i > 1 && buffer(a0).is_some() && buffer(a0) == buffer(end) {
                let c = v[i + 1] - a0;
                self.ap(a0, c, (j - i) as i128)?;
            } else {
                v[i..j].iter().try_for_each(|&a| self.ap(a, 0, 1))?;
            }
            i = j;
        }
        Ok(())
    }

    /// Records accesses at `a0 + c*k`, `k` in `[0, t)`.
    pub(super) fn ap(&mut self, a0: i128, c: i128, t: i128) -> Result<(), EvalError> {
        if t <= 0 {
            return Ok(());
        }
        let (a0, c) = if c < 0 {
            (a0 + c * (t - 1), -c)
        } else {
            (a0, c)
        };
        let (p, ub, off0) = self.unit_of(a0)?;
        let last = a0 + c * (t - 1) + self.width as i128 - 1;
        let (p1, _, off1) = self.unit_of(last)?;
        if p1 != p {
            return Err(EvalError::Unknown(Reason::Straddle));
        }
        merge_ranges(&mut self.ranges, (p, off0, off1 + 1));
        if p == NO_BUFFER {
            return Ok(());
        }
        let base = u64::from(p) << PARAM_SHIFT;
        // Units an access covers beyond its first, and the units one step moves.
        let span = (off0 + self.width - 1) / ub - off0 / ub;
        let stride = c as u64 / ub;
        // Steps no longer than the units an access covers leave no gap: one interval (a
        // warp's 4-byte elements at 1-byte units is one interval, not four strided runs).
        let gapless = c as u64 <= ub || ((c as u64).is_multiple_of(ub) && stride <= span + 1);
        if t == 1 || c == 0 || gapless {
            self.push((p, base + off0 / ub, 1, off1 / ub - off0 / ub + 1))?;
        } else if (c as u64).is_multiple_of(ub) {
            for s in 0..=span {
                self.push((p, base + off0 / ub + s, stride, t as u64))?;
            }
        } else {
            for k in 0..t {
                let a = a0 + c * k;
                let (_, _, o) = self.unit_of(a)?;
                let o1 = o + self.width - 1;
                self.push((p, base + o / ub, 1, o1 / ub - o / ub + 1))?;
            }
        }
        Ok(())
    }
}
