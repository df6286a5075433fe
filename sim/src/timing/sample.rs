//! Sampled simulation (issue 40, `paver simulate --sample`): simulate a launch's first TB
//! waves in detail until its rates have converged, skip the TBs the TB policy has not yet
//! dispatched, and extrapolate cycles and counters to the whole launch.
//!
//! The method (docs/SAMPLING.md has the evidence and what it costs):
//!
//! 1. **Windows and warm-up.** A window is `window_tbs` detailed TB completions (default
//!    one wave: the SMs times the resident TBs per SM). Measurement starts at the end of
//!    the first window at which the L2 has missed as many blocks as it holds (and never
//!    before the end of the first window): until then the caches are cold, every SM
//!    started at once, and a write-back L2 absorbs every write (a stencil's outputs reach
//!    DRAM only after tens of waves on an H100). A launch whose misses never fill the L2
//!    runs in full.
//! 2. **Rates per instruction, since the warm-up.** At the end of each later window the
//!    sampler takes every counter's growth since the warm-up ([`Counters`]: cycles, warp
//!    and thread instructions, L1 and L2 accesses, hits, misses, NoC traffic, DRAM reads,
//!    writes, row outcomes) per warp instruction issued. Per instruction, not per TB: the
//!    counters grow with the resident TBs' progress, and a window closed by completions can
//!    end with them further along or behind (on a naive transpose one wave's L2 accesses
//!    per completed TB vary by 10 % while every TB makes exactly the same 160); per
//!    instruction, and over all windows since the warm-up, that lag shrinks with the span.
//! 3. **Converge.** When, over the last `windows` windows, cycles, L1 accesses, L2 accesses
//!    and DRAM bytes per instruction have each stayed within `tolerance` of their latest
//!    value, the engine dispatches nothing more: the resident TBs finish in detail (the
//!    launch's tail, the last TBs draining unevenly, is simulated, not extrapolated), and
//!    the TBs the policy still holds are skipped. A launch whose rates never settle (TBs
//!    whose work or locality changes along the grid faster than the tolerance allows) runs
//!    in full.
//! 4. **Extrapolate.** The skipped TBs execute the detailed TBs' mean warp instructions per
//!    TB; each counter grows by that work times its converged rate, and `cycles` by that
//!    work at the converged cycles per instruction (the steady state's IPC).
//!
//! The stats carry [`SamplingStats`]: detailed and skipped TBs, the measured windows'
//! rates, and an error bound: the criterion's observed drift (the largest relative move
//! of the four rates over the last windows) times the skipped fraction. It bounds how far
//! the rates were still moving, not a trend the prefix cannot see: a launch whose later
//! TBs differ from its first ones (a triangular loop, data-dependent work) converges on
//! the first ones' rates. docs/SAMPLING.md measures the error on the corpus.
//!
//! What sampling assumes: the skipped TBs do not change what the simulated TBs do (no
//! inter-TB communication through global memory: a kernel that counts finished TBs with
//! an atomic, or spins on a flag another TB sets, must be simulated in full), and `paver
//! simulate` writes no outputs, so skipped TBs are not run at all. Per-SM entries of the
//! stats (`sms`) and the optional mechanism stats (ICC, LD, NUMA, iPAWS) cover the
//! simulated TBs only; the run refuses `--explain` with sampling.

use super::cache::CacheStats;
use super::dram::DramStats;
use super::noc::NocStats;
use super::stats::{SmStats, Stats};

/// How to sample (`paver simulate --sample`; a plan's `sample = true`).
#[derive(Clone, Debug, PartialEq)]
pub struct SampleOptions {
    /// TB completions per window; `None`: one wave (SMs x resident TBs per SM).
    pub window_tbs: Option<u64>,
    /// Windows over which the rates must have stayed within the tolerance.
    pub windows: u32,
    /// How far the rates may move over those windows, relative (0.005: 0.5 %).
    pub tolerance: f64,
}

impl Default for SampleOptions {
    /// One-wave windows; rates within 0.5 % over the last six (docs/SAMPLING.md: three
    /// windows within 1 % stopped transpose_naive and a Pascal stencil 3-6 % off).
    fn default() -> SampleOptions {
        SampleOptions {
            window_tbs: None,
            windows: 6,
            tolerance: 0.005,
        }
    }
}

pub use super::stats::{SamplingStats, WindowRates};

/// The additive counters sampling extrapolates, as one flat vector (the order of
/// [`Counters::NAMES`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Counters(pub [f64; Counters::LEN]);

impl Counters {
    /// Number of counters.
    pub const LEN: usize = 31;
    /// Their names (stats paths), for messages and docs.
    pub const NAMES: [&'static str; Counters::LEN] = [
        "cycles",
        "warp_instructions",
        "thread_instructions",
        "l1.accesses",
        "l1.hits",
        "l1.hit_reserve",
        "l1.misses",
        "l1.reservation_fails",
        "l1.writes",
        "l1.writebacks",
        "l2.accesses",
        "l2.hits",
        "l2.hit_reserve",
        "l2.misses",
        "l2.reservation_fails",
        "l2.writes",
        "l2.writebacks",
        "noc.requests",
        "noc.replies",
        "noc.request_flits",
        "noc.reply_flits",
        "dram.reads",
        "dram.writes",
        "dram.bytes",
        "dram.row_hits",
        "dram.row_misses",
        "dram.row_conflicts",
        "dram.activates",
        "dram.precharges",
        "dram.write_drains",
        "dram.read_latency_sum",
    ];
    const CYCLES: usize = 0;
    const WARP_INSTRUCTIONS: usize = 1;
    const L1_ACCESSES: usize = 3;
    const L2_ACCESSES: usize = 10;
    const L2_MISSES: usize = 13;
    const DRAM_READS: usize = 21;
    const DRAM_BYTES: usize = 23;
    /// The rates that must have settled for convergence.
    const CONVERGE_ON: [usize; 4] = [
        Counters::CYCLES,
        Counters::L1_ACCESSES,
        Counters::L2_ACCESSES,
        Counters::DRAM_BYTES,
    ];

    /// The counters at cycle `cycle`.
    pub fn of(
        cycle: u64,
        sm: &SmStats,
        l1: &CacheStats,
        l2: &CacheStats,
        noc: &NocStats,
        dram: &DramStats,
    ) -> Counters {
        let c = |s: &CacheStats| {
            [
                s.accesses,
                s.hits,
                s.hit_reserve,
                s.misses,
                s.reservation_fails,
                s.writes,
                s.writebacks,
            ]
        };
        let mut v = [0u64; Counters::LEN];
        v[0] = cycle;
        v[1] = sm.warp_instructions;
        v[2] = sm.thread_instructions;
        v[3..10].copy_from_slice(&c(l1));
        v[10..17].copy_from_slice(&c(l2));
        v[17..21].copy_from_slice(&[
            noc.requests,
            noc.replies,
            noc.request_flits,
            noc.reply_flits,
        ]);
        v[21..31].copy_from_slice(&[
            dram.reads,
            dram.writes,
            dram.bytes,
            dram.row_hits,
            dram.row_misses,
            dram.row_conflicts,
            dram.activates,
            dram.precharges,
            dram.write_drains,
            dram.read_latency_sum,
        ]);
        Counters(v.map(|x| x as f64))
    }

    /// `(self - earlier) / warp instructions`: per-instruction rates over a window. Every
    /// counter grows with the resident TBs' progress, not with the TBs that complete, so
    /// per-instruction rates of a window are exact where per-TB ones are not (a window
    /// that ends with its resident TBs further along counts more per completion).
    fn rate_since(&self, earlier: &Counters) -> Counters {
        let work =
            (self.0[Counters::WARP_INSTRUCTIONS] - earlier.0[Counters::WARP_INSTRUCTIONS]).max(1.0);
        let mut r = [0.0; Counters::LEN];
        for (i, x) in r.iter_mut().enumerate() {
            *x = (self.0[i] - earlier.0[i]) / work;
        }
        Counters(r)
    }
}

/// What the engine does next ([`Sampler::observe`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Keep simulating.
    Continue,
    /// The rates have converged: dispatch nothing more (the resident TBs finish in detail);
    /// the TBs the policy still holds are skipped.
    Stop,
}

/// The sampling state of one run: fed at the end of each window, it says when to stop,
/// and extrapolates at the end.
pub struct Sampler {
    opts: SampleOptions,
    window: u64,
    /// The L2's capacity in blocks (sectors when sectored): the warm-up lasts until the L2
    /// has missed that many times.
    l2_blocks: u64,
    num_tbs: u64,
    /// Detailed completions at the start of the current window.
    start_done: u64,
    /// Whether a window has been opened ([`Sampler::observe`] at `done` = 0).
    opened: bool,
    /// The counters at the end of the warm-up window, where measurement starts.
    origin: Option<Counters>,
    /// The rates since `origin` at the end of each measured window, with the detailed
    /// completions and the window's own warp instructions.
    measured: Vec<(u64, f64, Counters)>,
    /// The counters at the end of the last window.
    last: Option<Counters>,
    converged_after: Option<u64>,
    /// Detailed completions when the warm-up ended.
    warmed_after: u64,
    skipped: u64,
}

impl Sampler {
    /// A sampler for a launch of `num_tbs` TBs whose wave is `wave_tbs` TBs, on a GPU whose
    /// L2 holds `l2_blocks` blocks.
    pub fn new(opts: &SampleOptions, num_tbs: u64, wave_tbs: u64, l2_blocks: u64) -> Sampler {
        Sampler {
            window: opts.window_tbs.unwrap_or(wave_tbs).max(1),
            l2_blocks,
            opts: SampleOptions {
                windows: opts.windows.max(1),
                ..opts.clone()
            },
            num_tbs,
            start_done: 0,
            opened: false,
            origin: None,
            measured: Vec::new(),
            last: None,
            converged_after: None,
            warmed_after: 0,
            skipped: 0,
        }
    }

    /// Whether `done` detailed completions close the current window (the engine then calls
    /// [`Sampler::observe`] with the counters; between windows it need not build them).
    pub fn window_closed(&self, done: u64) -> bool {
        self.converged_after.is_none() && done >= self.start_done + self.window
    }

    /// The engine's report: `done` detailed completions, `pending` TBs the TB policy still
    /// holds, `now` the counters. Call once at the start (`done` = 0) and then whenever
    /// [`Sampler::window_closed`].
    pub fn observe(&mut self, done: u64, pending: u64, now: Counters) -> Step {
        let previous = self.last.replace(now);
        self.start_done = done;
        if !std::mem::replace(&mut self.opened, true) {
            return Step::Continue;
        }
        let Some(origin) = self.origin else {
            // The warm-up ends once the L2 has missed as many blocks as it holds: before
            // that a write-back L2 absorbs every write (a stencil's outputs reach DRAM only
            // after tens of waves on an H100) and its misses are compulsory.
            if now.0[Counters::L2_MISSES] >= self.l2_blocks as f64 {
                self.origin = Some(now);
                self.warmed_after = done;
            }
            return Step::Continue;
        };
        let work = previous.map_or(0.0, |p| {
            now.0[Counters::WARP_INSTRUCTIONS] - p.0[Counters::WARP_INSTRUCTIONS]
        });
        self.measured.push((done, work, now.rate_since(&origin)));
        if pending == 0 || !self.converged() {
            return Step::Continue;
        }
        self.converged_after = Some(done);
        Step::Stop
    }

    /// The engine skipped the `n` TBs the policy still held.
    pub fn skipped(&mut self, n: u64) {
        self.skipped += n;
    }

    /// TBs skipped.
    pub fn skipped_tbs(&self) -> u64 {
        self.skipped
    }

    /// The largest relative distance, over [`Counters::CONVERGE_ON`], of the rates at the
    /// ends of the last `windows` measured windows before the latest from the latest ones;
    /// `None` with fewer than `windows + 1` measured windows.
    fn drift(&self) -> Option<f64> {
        let k = self.opts.windows as usize;
        let n = self.measured.len();
        if n < k + 1 {
            return None;
        }
        let latest = &self.measured[n - 1].2;
        let mut worst = 0.0f64;
        for (_, _, r) in &self.measured[n - 1 - k..n - 1] {
            for &i in &Counters::CONVERGE_ON {
                let d = (r.0[i] - latest.0[i]).abs() / latest.0[i].abs().max(f64::MIN_POSITIVE);
                worst = worst.max(if latest.0[i] == 0.0 && r.0[i] == 0.0 {
                    0.0
                } else {
                    d
                });
            }
        }
        Some(worst)
    }

    /// The criterion: over the last `windows` windows, every rate of
    /// [`Counters::CONVERGE_ON`] measured since the warm-up has stayed within `tolerance`
    /// of its latest value.
    fn converged(&self) -> bool {
        self.drift().is_some_and(|d| d <= self.opts.tolerance)
    }

    /// Adds the skipped TBs' share to `stats` (totals only) and records what sampling did.
    pub fn finish(self, stats: &mut Stats) {
        let simulated_cycles = stats.cycles;
        let detailed = self.num_tbs - self.skipped;
        // The skipped TBs' warp instructions: the detailed TBs' mean per TB (exact for them,
        // all of them having completed), at the rates measured up to convergence.
        let per_tb = stats.warp_instructions as f64 / detailed.max(1) as f64;
        let work = self.skipped as f64 * per_tb;
        let rates = match (self.converged_after, self.measured.last()) {
            (Some(_), Some((_, _, r))) => r.0,
            _ => [0.0; Counters::LEN],
        };
        let e = rates.map(|x| (x * work).round() as u64);
        stats.cycles += e[0];
        stats.warp_instructions += e[1];
        stats.thread_instructions += e[2];
        for (s, o) in [(&mut stats.l1, 3), (&mut stats.l2, 10)] {
            s.accesses += e[o];
            s.hits += e[o + 1];
            s.hit_reserve += e[o + 2];
            s.misses += e[o + 3];
            s.reservation_fails += e[o + 4];
            s.writes += e[o + 5];
            s.writebacks += e[o + 6];
        }
        let n = &mut stats.noc;
        n.requests += e[17];
        n.replies += e[18];
        n.request_flits += e[19];
        n.reply_flits += e[20];
        let d = &mut stats.dram;
        d.reads += e[21];
        d.writes += e[22];
        d.bytes += e[23];
        d.row_hits += e[24];
        d.row_misses += e[25];
        d.row_conflicts += e[26];
        d.activates += e[27];
        d.precharges += e[28];
        d.write_drains += e[29];
        d.read_latency_sum += e[30];
        d.read_latency_avg = if d.reads == 0 {
            0.0
        } else {
            d.read_latency_sum as f64 / d.reads as f64
        };
        stats.ipc = if stats.cycles == 0 {
            0.0
        } else {
            stats.warp_instructions as f64 / stats.cycles as f64
        };
        let skipped_fraction = self.skipped as f64 / self.num_tbs.max(1) as f64;
        let error_bound = if self.skipped == 0 {
            0.0
        } else {
            self.drift().unwrap_or(1.0) * skipped_fraction
        };
        stats.sampling = Some(SamplingStats {
            window_tbs: self.window,
            windows: self.opts.windows,
            tolerance: self.opts.tolerance,
            converged: self.converged_after.is_some(),
            warm_after_tbs: self.warmed_after,
            converged_after_tbs: self.converged_after.unwrap_or(0),
            detailed_tbs: detailed,
            skipped_tbs: self.skipped,
            sampled_fraction: detailed as f64 / self.num_tbs.max(1) as f64,
            measured_windows: self.measured.len() as u64,
            simulated_cycles,
            error_bound,
            measured: self
                .measured
                .iter()
                .map(|&(end_tbs, work, ref r)| WindowRates {
                    end_tbs,
                    warp_instructions: work as u64,
                    cycles: r.0[Counters::CYCLES],
                    l1_accesses: r.0[Counters::L1_ACCESSES],
                    l2_accesses: r.0[Counters::L2_ACCESSES],
                    dram_reads: r.0[Counters::DRAM_READS],
                })
                .collect(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counters after `instructions` warp instructions at `cpi` cycles and `l2` L2
    /// accesses per instruction.
    fn at(instructions: f64, cycles: f64, l2: f64) -> Counters {
        let mut c = Counters([0.0; Counters::LEN]);
        c.0[Counters::CYCLES] = cycles;
        c.0[Counters::WARP_INSTRUCTIONS] = instructions;
        c.0[Counters::L1_ACCESSES] = l2 * 2.0;
        c.0[Counters::L2_ACCESSES] = l2;
        c.0[Counters::L2_MISSES] = l2;
        c
    }

    /// The warm-up lasts until the L2 has missed as many blocks as it holds.
    #[test]
    fn warm_up_waits_for_the_l2_to_fill() {
        let mut s = Sampler::new(&three(), 1000, 10, 1500);
        s.observe(0, 1000, at(0.0, 0.0, 0.0));
        // 500 L2 misses a window: the L2 has missed 1500 blocks at the third window's end.
        for w in 1..=3u64 {
            let x = w as f64;
            assert_eq!(
                s.observe(10 * w, 1000, at(1000.0 * x, 2000.0 * x, 500.0 * x)),
                Step::Continue
            );
            assert_eq!(s.origin.is_some(), w == 3, "window {w}");
        }
        assert_eq!(s.warmed_after, 30);
        for w in 4..=6u64 {
            let x = w as f64;
            assert_eq!(
                s.observe(10 * w, 1000, at(1000.0 * x, 2000.0 * x, 500.0 * x)),
                Step::Continue
            );
        }
        assert_eq!(s.observe(70, 930, at(7000.0, 14000.0, 3500.0)), Step::Stop);
    }

    /// Three windows within 1 % (the tests' criterion; the default is stricter).
    fn three() -> SampleOptions {
        SampleOptions {
            windows: 3,
            tolerance: 0.01,
            ..SampleOptions::default()
        }
    }

    /// A steady launch: the first window warms up, then three more windows keep the
    /// rates since the warm-up within 1 %: stop.
    #[test]
    fn stops_once_rates_settle() {
        let mut s = Sampler::new(&three(), 1000, 10, 0);
        assert_eq!(s.observe(0, 1000, at(0.0, 0.0, 0.0)), Step::Continue);
        assert!(!s.window_closed(9) && s.window_closed(10));
        // Warm-up: 1000 instructions in 900 cycles; then 2 cycles, 0.5 L2 per instruction.
        assert_eq!(s.observe(10, 980, at(1000.0, 900.0, 100.0)), Step::Continue);
        assert_eq!(
            s.observe(20, 970, at(2000.0, 2900.0, 600.0)),
            Step::Continue
        );
        assert_eq!(
            s.observe(30, 960, at(3000.0, 4900.0, 1100.0)),
            Step::Continue
        );
        assert_eq!(
            s.observe(40, 950, at(4000.0, 6900.0, 1600.0)),
            Step::Continue
        );
        // Four measured windows: the last three's rates (2, 0.5) equal the latest.
        assert_eq!(s.observe(50, 940, at(5000.0, 8900.0, 2100.0)), Step::Stop);
        assert!(!s.window_closed(1000));
        assert_eq!(s.drift(), Some(0.0));
    }

    /// Rates that keep drifting by more than the tolerance never stop the run.
    #[test]
    fn drifting_rates_never_stop() {
        let mut s = Sampler::new(&SampleOptions::default(), 1000, 10, 0);
        s.observe(0, 1000, at(0.0, 0.0, 0.0));
        let (mut i, mut c) = (0.0, 0.0);
        for w in 1..100u64 {
            // Cycles per instruction grow 5 % a window: the mean since the warm-up moves
            // by more than 0.5 % over six windows for the whole launch.
            i += 1000.0;
            c += 1000.0 * 1.05f64.powi(w as i32);
            let step = s.observe(10 * w, 1000 - 10 * w, at(i, c, i / 2.0));
            assert_eq!(step, Step::Continue, "window {w}");
        }
    }

    /// Nothing left to skip: no stop.
    #[test]
    fn never_stops_with_nothing_pending() {
        let mut s = Sampler::new(&SampleOptions::default(), 50, 10, 0);
        s.observe(0, 50, at(0.0, 0.0, 0.0));
        for w in 1..=5u64 {
            let step = s.observe(10 * w, 0, at(1000.0 * w as f64, 2000.0 * w as f64, 0.0));
            assert_eq!(step, Step::Continue);
        }
    }
}
