//! Serial and parallel runs give identical results: every buffer, every counter, and the
//! dynamic footprints, for every small launch of the corpus.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

mod common;

use common::*;
use sim::{FootprintCollector, Program, RunOptions};

#[test]
fn results_are_identical_across_thread_counts() {
    for case in cases() {
        let one = run_case(&case, "compute_90", 1);
        for threads in [2, 5] {
            let many = run_case(&case, "compute_90", threads);
            assert_eq!(
                one.result.stats, many.result.stats,
                "{} threads={threads}",
                case.stem
            );
            for i in 0..one.bound.params.len() {
                assert_eq!(
                    one.result.buffer(i),
                    many.result.buffer(i),
                    "{}/{} p{i} threads={threads}",
                    case.dir,
                    case.stem
                );
            }
        }
    }
}

#[test]
fn footprints_are_identical_across_thread_counts_and_cover_the_loads() {
    for name in ["mm_naive", "bfs"] {
        let case = cases().into_iter().find(|c| c.dir == name).unwrap();
        let dir = root().join("kernels").join(&case.dir);
        let module = ptx_parser::parse_file(&dir.join(format!("{name}.compute_90.ptx"))).unwrap();
        let f = module.kernel(&case.kernel).unwrap();
        let bound = launch::Launch::read(&case.launch)
            .unwrap()
            .bind(&case.kernel, &sim::param_sigs(f), &dir)
            .unwrap();
        let prog = Program::new(&module, &case.kernel).unwrap();
        let collect = |threads| {
            let mut c = FootprintCollector::new();
            sim::run(
                &prog,
                &bound,
                &RunOptions {
                    threads,
                    ..RunOptions::default()
                },
                &mut c,
            )
            .unwrap();
            c
        };
        let (a, b) = (collect(1), collect(4));
        let tbs: Vec<u64> = a.tbs().collect();
        assert_eq!(tbs, b.tbs().collect::<Vec<_>>());
        for &tb in &tbs {
            assert_eq!(a.tb_reads(tb), b.tb_reads(tb));
            let union: std::collections::BTreeSet<u64> = (0..a.num_warps(tb) as u32)
                .flat_map(|w| a.warp_reads(tb, w).iter().copied())
                .collect();
            assert_eq!(union.into_iter().collect::<Vec<_>>(), a.tb_reads(tb));
        }
        if name == "mm_naive" {
            // TB (bx, by) of mm_naive reads rows by*16.. of A and columns bx*16.. of B: 16 rows
            // and 16 columns of 64 floats, 4 bytes each.
            let n = 64u64;
            let reads = a.tb_reads(0);
            assert_eq!(reads.len() as u64, 2 * 16 * n * 4);
            let a_base = 1u64 << 36;
            assert!(reads.contains(&a_base) && reads.contains(&(a_base + (15 * n + 63) * 4 + 3)));
            assert!(!reads.contains(&(a_base + 16 * n * 4)));
        }
    }
}
