//! The public stepping API ([`sim::interp::TbExec`]) agrees with `sim::run`: stepping every
//! warp one instruction at a time, as the timing trace does, executes the same instructions
//! (per-PC counts, warp and thread instruction totals) as the interpreter's own runner, for
//! every small launch of the corpus; and the reported PCs follow the counts.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

mod common;

use common::*;
use sim::interp::{param_block, Control, Geometry, TbExec};
use sim::{Globals, NoObserver, Program, RunOptions};

#[test]
fn stepping_executes_what_run_executes() {
    for case in cases() {
        let dir = root().join("kernels").join(&case.dir);
        let module =
            ptx_parser::parse_file(&dir.join(format!("{}.compute_90.ptx", case.dir))).unwrap();
        let f = module.kernel(&case.kernel).unwrap();
        let bound = runnable(&case.launch)
            .bind(&case.kernel, &sim::param_sigs(f), &dir)
            .unwrap();
        let prog = Program::new(&module, &case.kernel).unwrap();
        let ran = sim::run(&prog, &bound, &RunOptions::default(), &mut NoObserver).unwrap();

        let geom = Geometry::of(&prog, &bound).unwrap();
        let params = param_block(&prog, &bound);
        let mut globals = Globals::from_launch(&prog, &bound).unwrap();
        let (mut warp_insts, mut thread_insts) = (0u64, 0u64);
        let mut per_pc = vec![0u64; prog.len()];
        for tb in 0..bound.grid.count() {
            let mut exec = TbExec::new(&prog, &params, &geom, tb, u64::MAX);
            let mut seen = vec![0u64; prog.len()];
            loop {
                for w in 0..exec.num_warps() {
                    loop {
                        match exec.step_warp(w, &mut globals, &mut NoObserver).unwrap() {
                            Some(step) => {
                                seen[step.pc as usize] += 1;
                                thread_insts += u64::from(step.exec.count_ones());
                                warp_insts += 1;
                                assert_eq!(step.control, exec.state(w));
                            }
                            None if exec.state(w) == Control::Continue => {}
                            None => break,
                        }
                    }
                }
                if !exec.release_barrier().unwrap() {
                    break;
                }
            }
            assert!(exec.is_done());
            assert_eq!(seen, exec.counts(), "{} tb {tb}", case.stem);
            for (p, n) in per_pc.iter_mut().zip(&seen) {
                *p += n;
            }
        }
        let s = &ran.stats;
        assert_eq!(warp_insts, s.warp_instructions, "{}", case.stem);
        assert_eq!(thread_insts, s.thread_instructions, "{}", case.stem);
        assert_eq!(
            per_pc.iter().sum::<u64>(),
            s.per_opcode.values().sum::<u64>(),
            "{}",
            case.stem
        );
    }
}
