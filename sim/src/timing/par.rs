//! The parallel phase over SMs (issue 40): per simulated cycle, the SMs due then step in
//! parallel, and a serial phase, in SM-id order, hands what they sent to the memory system
//! and applies their results to the engine. Results are byte-identical at any thread count.
//!
//! Why this split, and why it is exact:
//! - An SM's step ([`Sm::cycle`]) reads and writes only its own state (warps, scoreboard,
//!   L1, LSU, its stats, its ledger and read log), with two exceptions. (1) It sends block
//!   requests to the memory system, which returns nothing to it and which nothing in the
//!   step reads: each SM sends into its own outbox ([`Outbox`]), and the serial phase
//!   replays the outboxes in SM order, so the interconnect, the L2 slices and DRAM see the
//!   very calls the one-thread loop makes, in the same order. (2) It may call the tracer
//!   (the functional interpreter) to refill a used-up warp window; that runs the kernel on
//!   the launch's one global memory, where the order of stores, loads and atomics across
//!   TBs decides the values read (atomics' old values, data-dependent control flow), and it
//!   counts the launch's instruction budget and collects device-side launches in order. An
//!   SM that may refill this cycle ([`Sm::may_trace`], conservative) therefore steps on the
//!   calling thread, in SM order among such SMs, while the others step on the pool: SMs of
//!   the two groups share nothing during the step, so only the order within the tracing
//!   group matters, and it is the serial order.
//! - Everything else the engine shares (the TB scheduler, launches, finished TBs, the SM
//!   agenda, busy time, sampling, progress, the ledger's assembly) stays in the engine's
//!   serial code, before or after this phase, and finished TBs are appended in SM order.
//! - iPAWS decides a kernel's policy by the first SM whose Adapt phase ends, through a value
//!   the SMs share during the step; runs with it step serially ([`cycle_threads`]).
//!
//! The pool is rayon's, one worker fewer than the threads asked for (the calling thread
//! steps the tracing SMs and the first chunk); each worker gets one contiguous range of
//! the non-tracing SMs due. A cycle with fewer than [`MIN_SMS_PER_THREAD`] such SMs per
//! thread steps serially: handing work to another thread costs microseconds, an SM's
//! cycle a fraction of one. Either way the results are the same.

use super::events::SmAgenda;
use super::mem::{MemPort, MemSystem, Outbox};
use super::sm::Sm;
use super::trace::Tracer;
use super::WarpPolicy;
use crate::SimError;

/// Fewest SMs stepping without the tracer, per thread, for a cycle to step in parallel
/// (below it the hand-off costs more than it saves; docs/PERFORMANCE.md, "Parallel
/// simulation (issue 40)").
pub const MIN_SMS_PER_THREAD: usize = 8;

/// The threads the cycle loop may use for a run asked to use `threads` with warp policy
/// `warp`, and why fewer when fewer (for a note to the user).
pub fn cycle_threads(threads: usize, warp: WarpPolicy) -> (usize, Option<&'static str>) {
    if threads > 1 && warp.0.ipaws {
        (
            1,
            Some(
                "iPAWS decides by the first SM to end its Adapt phase, which SMs stepping in \
                 parallel would race for: the cycle loop runs on one thread",
            ),
        )
    } else {
        (threads.max(1), None)
    }
}

/// What one SM's step produced, for the engine.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stepped {
    /// Something happened or is queued: the SM's next cycle matters.
    pub active: bool,
    /// The earliest time one of its blocked warps becomes ready.
    pub wake: u64,
    /// When the SM is next due (`u64::MAX`: on an event).
    pub next_due: u64,
}

/// SM `s`'s step at `now`, due then with `due` its recorded due time: its cycle when it
/// holds a TB, then its finished TBs into `finished` and, once it is empty, its busy time
/// since `busy_since`.
pub(crate) fn step<'p, M: MemPort>(
    s: &mut Sm<'p>,
    now: u64,
    due: u64,
    mem: &mut M,
    tracer: Option<&mut Tracer<'p>>,
    finished: &mut Vec<u32>,
    busy_since: &mut Option<u64>,
) -> Result<Stepped, SimError> {
    let mut out = Stepped {
        active: false,
        wake: u64::MAX,
        next_due: due,
    };
    // An SM without TBs has nothing to do (and nothing in flight towards it), but a TB it
    // launched may have finished at once.
    if s.is_busy() {
        let (a, w) = s.cycle(now, mem, tracer)?;
        out.active = a;
        out.wake = w;
        out.next_due = if a { now + 1 } else { w };
    }
    s.take_finished(finished);
    if !s.is_busy() {
        out.next_due = u64::MAX;
        if let Some(t) = busy_since.take() {
            s.stats_mut().busy_cycles += now - t;
        }
    }
    Ok(out)
}

/// Per-SM buffers of the parallel phase, kept across cycles for their capacity.
#[derive(Default)]
struct Lane {
    outbox: Outbox,
    finished: Vec<u32>,
    out: Option<Result<Stepped, SimError>>,
}

/// One SM's share of a parallel step.
struct Job<'a, 'p> {
    due: u64,
    sm: &'a mut Sm<'p>,
    lane: &'a mut Lane,
    busy: &'a mut Option<u64>,
}

impl Job<'_, '_> {
    /// Steps the SM without the tracer ([`Sm::may_trace`] said it needs none).
    fn run(&mut self, now: u64) {
        let Job {
            due,
            sm,
            lane,
            busy,
        } = self;
        lane.out = Some(step(
            sm,
            now,
            *due,
            &mut lane.outbox,
            None,
            &mut lane.finished,
            busy,
        ));
    }
}

/// The engine's state one cycle's SM steps touch.
pub(crate) struct Model<'a, 'p> {
    /// Every SM.
    pub sms: &'a mut [Sm<'p>],
    /// When each SM is due.
    pub due: &'a mut SmAgenda,
    /// The memory side.
    pub memsys: &'a mut MemSystem,
    /// The functional execution.
    pub tracer: &'a mut Tracer<'p>,
    /// Since when each SM has had a resident TB.
    pub busy_since: &'a mut [Option<u64>],
    /// TBs that finished this cycle, in SM order.
    pub finished: &'a mut Vec<u32>,
}

/// The SM steps of a run: serial, or over a thread pool.
pub(crate) struct Phase {
    pool: Option<rayon::ThreadPool>,
    threads: usize,
    lanes: Vec<Lane>,
    due_now: Vec<usize>,
    traces: Vec<bool>,
    /// Fewest SMs stepping without the tracer, per thread, for a parallel step.
    min_per_thread: usize,
    /// Parallel steps, SM steps on the pool, SM steps that might trace ([`Phase::counts`]).
    counts: (u64, u64, u64),
}

impl Phase {
    /// The phase of a run over `n` SMs on `threads` threads (1: serial, no pool), stepping
    /// in parallel when at least `min_per_thread` SMs per thread need not trace.
    pub fn new(threads: usize, n: usize, min_per_thread: usize) -> Result<Phase, SimError> {
        let pool = if threads > 1 {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads - 1)
                    .thread_name(|i| format!("paver-sm-{i}"))
                    .build()
                    .map_err(|e| {
                        SimError::Internal(format!("the SM thread pool did not start: {e}"))
                    })?,
            )
        } else {
            None
        };
        Ok(Phase {
            pool,
            threads: threads.max(1),
            lanes: (0..n).map(|_| Lane::default()).collect(),
            due_now: Vec::new(),
            traces: vec![false; n],
            min_per_thread: min_per_thread.max(1),
            counts: (0, 0, 0),
        })
    }

    /// Steps taken in parallel, SM steps on the pool, and SM steps in them on the calling
    /// thread because they might trace ([`super::RunInfo`]).
    pub fn counts(&self) -> (u64, u64, u64) {
        self.counts
    }

    /// Steps every SM due at `now` (`m.due`'s current set), then, in SM order, delivers
    /// their requests, collects their finished TBs and records when each is next due.
    /// Returns whether any was active and the earliest wake-up time they reported.
    pub fn run(&mut self, now: u64, m: Model<'_, '_>) -> Result<(bool, u64), SimError> {
        self.due_now.clear();
        while let Some(i) = m.due.take_current() {
            self.due_now.push(i);
        }
        let mut pure = 0;
        if self.pool.is_some() && self.due_now.len() >= self.min_per_thread * self.threads {
            for &i in &self.due_now {
                let t = m.sms[i].may_trace(now);
                self.traces[i] = t;
                pure += usize::from(!t);
            }
        }
        if pure < self.min_per_thread * self.threads {
            return self.serial(now, m);
        }
        match self.pool.take() {
            Some(pool) => {
                let r = self.parallel(&pool, now, pure, m);
                self.pool = Some(pool);
                r
            }
            None => self.serial(now, m),
        }
    }

    /// The one-thread loop: each SM due, in SM order, sending straight to the memory side.
    fn serial(&mut self, now: u64, m: Model<'_, '_>) -> Result<(bool, u64), SimError> {
        let (mut active, mut wake) = (false, u64::MAX);
        for &i in &self.due_now {
            let o = step(
                &mut m.sms[i],
                now,
                m.due.due(i),
                m.memsys,
                Some(m.tracer),
                m.finished,
                &mut m.busy_since[i],
            )?;
            active |= o.active;
            wake = wake.min(o.wake);
            m.due.set(i, o.next_due, now);
        }
        Ok((active, wake))
    }

    fn parallel(
        &mut self,
        pool: &rayon::ThreadPool,
        now: u64,
        pure: usize,
        m: Model<'_, '_>,
    ) -> Result<(bool, u64), SimError> {
        let mut pure_jobs = Vec::with_capacity(pure);
        let mut trace_jobs = Vec::with_capacity(self.due_now.len() - pure);
        let mut next = self.due_now.iter().copied().peekable();
        let each = m
            .sms
            .iter_mut()
            .zip(self.lanes.iter_mut())
            .zip(m.busy_since.iter_mut())
            .enumerate();
        for (i, ((sm, lane), busy)) in each {
            if next.peek() != Some(&i) {
                continue;
            }
            next.next();
            let job = Job {
                due: m.due.due(i),
                sm,
                lane,
                busy,
            };
            if self.traces[i] {
                trace_jobs.push(job);
            } else {
                pure_jobs.push(job);
            }
        }
        self.counts.0 += 1;
        self.counts.1 += pure as u64;
        self.counts.2 += trace_jobs.len() as u64;
        let per = pure.div_ceil(self.threads).max(1);
        let tracer = &mut *m.tracer;
        pool.in_place_scope(|sc| {
            let mut chunks = pure_jobs.chunks_mut(per);
            let first = chunks.next();
            for c in chunks {
                sc.spawn(move |_| {
                    for j in c {
                        j.run(now);
                    }
                });
            }
            // The SMs that may trace, in SM order, on this thread; none after an error
            // (the serial loop stops there too).
            for j in &mut trace_jobs {
                let Job {
                    due,
                    sm,
                    lane,
                    busy,
                } = j;
                let r = step(
                    sm,
                    now,
                    *due,
                    &mut lane.outbox,
                    Some(&mut *tracer),
                    &mut lane.finished,
                    busy,
                );
                let failed = r.is_err();
                lane.out = Some(r);
                if failed {
                    break;
                }
            }
            for j in first.into_iter().flatten() {
                j.run(now);
            }
        });
        drop(pure_jobs);
        drop(trace_jobs);
        let (mut active, mut wake) = (false, u64::MAX);
        for &i in &self.due_now {
            let lane = &mut self.lanes[i];
            let o = match lane.out.take() {
                Some(r) => r?,
                None => {
                    return Err(SimError::Internal(format!(
                        "SM {i} did not step in the parallel phase"
                    )))
                }
            };
            for r in lane.outbox.0.drain(..) {
                m.memsys.send(i as u32, r.block, r.bytes, r.kind, r.at);
            }
            m.finished.append(&mut lane.finished);
            active |= o.active;
            wake = wake.min(o.wake);
            m.due.set(i, o.next_due, now);
        }
        Ok((active, wake))
    }
}
