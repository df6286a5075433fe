//! One launch on one GPU, computed once (issue 36): the analysis, the graph, the
//! descriptors and ptxas run once per launch however many mechanisms ask; partitioning
//! and simulation see the same GPU after its overrides; a schedule made for another GPU is
//! refused.

use std::path::{Path, PathBuf};

use experiment::{Error, Experiment, GpuSetup, GroupRequest, Run, Workload};
use sim::timing::TbPolicy;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace")
        .to_path_buf()
}

/// Kernel `name` of `kernels/<dir>/<dir>.compute_70.ptx` with the launch `launch`.
fn workload(dir: &str, name: &str, launch: &str) -> Workload {
    let d = root().join("kernels").join(dir);
    let ptx = d.join(format!("{dir}.compute_70.ptx"));
    let module = ptx_parser::parse_file(&ptx).expect("ptx");
    let kernel = module
        .functions
        .iter()
        .position(|f| f.name == name)
        .expect("kernel");
    let l = launch::Launch::read(&d.join(launch)).expect("launch");
    let f = &module.functions[kernel];
    let bound = l
        .bind(name, &launch::param_sigs(f), &d)
        .expect("bind")
        .with_module(&module);
    Workload::new(
        module,
        kernel,
        Some(ptx),
        l,
        bound,
        analysis::Options::default(),
    )
}

fn gpu(name: &str) -> GpuSetup {
    GpuSetup::new(gpu::GpuConfig::builtin(name).expect("gpu"))
}

#[test]
fn every_mechanism_shares_one_analysis() {
    let w = workload("syrk", "syrk", "small.json");
    let ld = GpuSetup {
        sets: vec!["ld.cache_policy=ld".into(), "ld.prefetch=ld".into()],
        ..gpu("volta")
    };
    let e = Experiment::new(&w, &ld).expect("experiment");
    let s = e.schedule(&GroupRequest::new("ld")).expect("ld groups");
    let mut run = Run::new(TbPolicy::parse("ld").expect("ld"), "ld");
    run.schedule = Some(s);
    let opts = e.options(&run).expect("options");
    assert!(
        !opts.hints.is_empty(),
        "the cache and prefetcher read the descriptors"
    );
    e.simulate(&opts, &mut |_, _, _| {}).expect("simulate");
    // RB-TS on the same GPU, then Algorithm 2's placement on the 4-module GPU.
    e.schedule(&GroupRequest::new("rb-ts"))
        .expect("rb-ts groups");
    let m = Experiment::new(&w, &gpu("mcm4")).expect("mcm4");
    let mut run = Run::new(TbPolicy::LRR, "lrr");
    run.placement = Some("ld".into());
    let opts = m.options(&run).expect("placement");
    assert!(opts.placement.and_then(|p| p.plan).is_some());
    // The groups, the graph and the placement share the analysis at the GPU's line; the
    // Locality Descriptor runtime also reads its C-Tile -> D-Tile maps at 32 B sectors (the
    // guided prefetcher, issue 39): a second granularity, analysed once.
    let c = w.counts();
    assert_eq!((c.analyses, c.graphs, c.descriptors), (2, 1, 2), "{c:?}");
    // Again, on another experiment of the same workload: nothing is recomputed.
    let again = Experiment::new(&w, &ld).expect("experiment");
    assert!(!again.hints().expect("hints").is_empty());
    assert_eq!(w.counts(), c);
}

#[test]
fn ptxas_runs_once_per_architecture() {
    // A ptxas that fails: the launch file's numbers are used, with a warning.
    let dir = std::env::temp_dir().join(format!("paver-once-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let fake = dir.join("ptxas");
    write_script(
        &fake,
        "#!/bin/sh\necho 'ptxas fatal: not really' >&2\nexit 1\n",
    );
    let w = workload("mm_naive", "mm_naive", "small.json");
    let with = |g: &str| GpuSetup {
        ptxas: Some(fake.clone()),
        ..gpu(g)
    };
    let a = Experiment::new(&w, &with("volta")).expect("volta");
    assert_eq!(
        a.notes().len(),
        1,
        "the failure is reported: {:?}",
        a.notes()
    );
    Experiment::new(&w, &with("volta")).expect("volta again");
    Experiment::new(&w, &with("titanv")).expect("titanv: the same sm_70");
    assert_eq!(w.counts().ptxas, 1);
    Experiment::new(&w, &with("h100")).expect("h100");
    assert_eq!(w.counts().ptxas, 2, "sm_90 asks again");
    // A forced register count needs no ptxas.
    let forced = GpuSetup {
        registers: Some(40),
        ..with("pascal")
    };
    Experiment::new(&w, &forced).expect("forced");
    assert_eq!(w.counts().ptxas, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

fn write_script(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

#[test]
fn groups_are_made_for_the_gpu_simulated() {
    let w = workload("mm_naive", "mm_naive", "small.json");
    let small = GpuSetup {
        sets: vec!["core.num_sms=4".into(), "tbs_per_sm=2".into()],
        ..gpu("fermi")
    };
    let e = Experiment::new(&w, &small).expect("experiment");
    let s = e.schedule(&GroupRequest::new("rb-ts")).expect("groups");
    assert_eq!((s.num_sms, s.tbs_per_sm), (4, 2));
    let mut run = Run::new(TbPolicy::parse("rb-ts").expect("rb-ts"), "rb-ts");
    run.schedule = Some(s);
    let stats = e
        .simulate(&e.options(&run).expect("options"), &mut |_, _, _| {})
        .expect("simulate");
    let shape = stats.schedule.expect("the stats record the schedule");
    assert_eq!((shape.num_sms, shape.tbs_per_sm), (4, 2));
    assert_eq!(stats.tbs_per_sm, 2);
    // The groups of the unmodified Fermi (15 SMs) are refused on the 4-SM one.
    let full = Experiment::new(&w, &gpu("fermi")).expect("fermi");
    run.schedule = Some(full.schedule(&GroupRequest::new("rb-ts")).expect("groups"));
    match e.options(&run) {
        Err(Error::ScheduleGpu {
            what: "SMs",
            schedule: 15,
            simulated: 4,
            ..
        }) => {}
        other => panic!("expected a schedule/GPU mismatch, got {:?}", other.err()),
    }
}
