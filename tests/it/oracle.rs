//! A differential oracle beyond the corpus (issue 41): random kernels, written as PTX in the
//! shapes nvcc emits (affine and guarded index arithmetic over 1-3-D grids, 2-D positions
//! by `/` and `%`, loops with data-independent bounds, nested loops, branches on loaded
//! floats that reconverge, shared-memory staging across `bar.sync`, early returns before a
//! barrier), analysed statically and by the interpreter (`paver analyze`
//! and `paver analyze --dynamic`). What the static analysis reports must be what the run
//! reads: every load it puts in the graph reads exactly the bytes the run's load read, one
//! it proves never executed never runs, and when every load is in the graph (or never
//! executed) the per-TB footprints and the graph's statistics are equal. A load it cannot
//! resolve must say why; it may not be silently wrong.
//!
//! In CI a small count runs (`PAVER_ORACLE_COUNT`, default 40); by hand, for hours:
//!
//! ```sh
//! PAVER_ORACLE_COUNT=100000 PAVER_ORACLE_SEED=1000 cargo test --release --test it oracle -- --nocapture
//! ```
//!
//! A failure names its seed and leaves the kernel and its launch in the temporary folder;
//! `PAVER_ORACLE_SEED=S PAVER_ORACLE_COUNT=1` reproduces it (`PAVER_ORACLE_KEEP=1` keeps
//! the last kernel's files after a pass too).

use std::fmt::Write;

use serde_json::Value;

/// SplitMix64: the generator's only source of choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.next() as usize % xs.len()]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// One generated kernel: its PTX and launch file.
struct Kernel {
    ptx: String,
    launch: String,
}

/// The PTX under construction: registers by class, labels, the body's lines.
struct Ptx {
    rng: Rng,
    body: String,
    r: u32,
    rd: u32,
    p: u32,
    f: u32,
    labels: u32,
}

impl Ptx {
    fn line(&mut self, s: impl AsRef<str>) {
        self.body.push('\t');
        self.body.push_str(s.as_ref());
        self.body.push('\n');
    }
    fn r(&mut self) -> String {
        self.r += 1;
        format!("%r{}", self.r)
    }
    fn rd(&mut self) -> String {
        self.rd += 1;
        format!("%rd{}", self.rd)
    }
    fn p(&mut self) -> String {
        self.p += 1;
        format!("%p{}", self.p)
    }
    fn f(&mut self) -> String {
        self.f += 1;
        format!("%f{}", self.f)
    }
    fn label(&mut self) -> String {
        self.labels += 1;
        format!("$L__BB0_{}", self.labels)
    }
    fn place(&mut self, label: &str) {
        let _ = writeln!(self.body, "{label}:");
    }
}

/// What the index arithmetic may read: per dimension the thread's global index, its
/// `%tid` and its `%ctaid`, and the scalar parameters.
struct Vars {
    g: Vec<String>,
    tid: Vec<String>,
    ctaid: Vec<String>,
    scalars: Vec<String>,
}

/// `c0 + sum c_i * x_i` over a few of `vars` (and `extra`, a loop counter, with a
/// coefficient that is never zero), as nvcc writes it: `mov` then `mad.lo.s32` chains.
fn affine(k: &mut Ptx, vars: &Vars, extra: &[String]) -> String {
    let mut acc = k.r();
    let c0 = k.rng.int(-8, 64);
    k.line(format!("mov.u32 \t{acc}, {c0};"));
    let mut pool: Vec<&String> = vars.g.iter().collect();
    pool.extend(&vars.tid);
    pool.extend(&vars.ctaid);
    pool.extend(&vars.scalars);
    let terms = k.rng.int(1, 3);
    for _ in 0..terms {
        let x = pool[k.rng.next() as usize % pool.len()].clone();
        let c = k.rng.pick(&[-3i64, -1, 1, 1, 2, 3, 4, 8, 32]);
        let next = k.r();
        k.line(format!("mad.lo.s32 \t{next}, {x}, {c}, {acc};"));
        acc = next;
    }
    for x in extra {
        let c = k.rng.pick(&[1i64, 1, 2, 4, 16, -1]);
        let next = k.r();
        k.line(format!("mad.lo.s32 \t{next}, {x}, {c}, {acc};"));
        acc = next;
    }
    acc
}

/// A guarded load of `base[idx]` (elements of 4 bytes, `len` of them) added to `acc`:
/// `if ((unsigned) idx < len)`, sometimes with a second, random bound on a global index.
fn guarded_load(k: &mut Ptx, vars: &Vars, base: &str, len: u64, idx: &str, acc: &str) {
    let skip = k.label();
    let p = k.p();
    k.line(format!("setp.ge.u32 \t{p}, {idx}, {len};"));
    k.line(format!("@{p} bra \t{skip};"));
    if k.rng.chance(30) {
        let g = vars.g[k.rng.next() as usize % vars.g.len()].clone();
        let bound = k.rng.int(1, 40);
        let q = k.p();
        k.line(format!("setp.gt.s32 \t{q}, {g}, {bound};"));
        k.line(format!("@{q} bra \t{skip};"));
    }
    let off = k.rd();
    let addr = k.rd();
    let v = k.f();
    k.line(format!("mul.wide.s32 \t{off}, {idx}, 4;"));
    k.line(format!("add.s64 \t{addr}, {base}, {off};"));
    k.line(format!("ld.global.f32 \t{v}, [{addr}];"));
    k.line(format!("add.f32 \t{acc}, {acc}, {v};"));
    if k.rng.chance(30) {
        // Branches on the loaded value that all reconverge before what follows.
        let (p1, p2, join) = (k.p(), k.p(), k.label());
        k.line(format!("setp.gt.f32 \t{p1}, {v}, 0f3F000000;"));
        k.line(format!("@{p1} bra \t{join};"));
        k.line(format!("setp.lt.f32 \t{p2}, {v}, 0f3E800000;"));
        k.line(format!("@{p2} bra \t{join};"));
        k.line(format!("add.f32 \t{acc}, {acc}, 0f3F800000;"));
        k.place(&join);
    }
    k.place(&skip);
}

/// A counted loop `for (i = 0; i < bound; i += step)` around `body` (bound a constant or a
/// scalar parameter).
fn counted_loop(k: &mut Ptx, vars: &Vars, body: &mut dyn FnMut(&mut Ptx, &str)) {
    let i = k.r();
    let top = k.label();
    k.line(format!("mov.u32 \t{i}, 0;"));
    k.place(&top);
    body(k, &i);
    let step = k.rng.pick(&[1i64, 1, 2, 3]);
    k.line(format!("add.s32 \t{i}, {i}, {step};"));
    let p = k.p();
    if k.rng.chance(50) && !vars.scalars.is_empty() {
        let s = vars.scalars[k.rng.next() as usize % vars.scalars.len()].clone();
        k.line(format!("setp.lt.s32 \t{p}, {i}, {s};"));
    } else {
        let bound = k.rng.int(1, 9);
        k.line(format!("setp.lt.s32 \t{p}, {i}, {bound};"));
    }
    k.line(format!("@{p} bra \t{top};"));
}

fn generate(seed: u64) -> Kernel {
    let mut rng = Rng(seed);
    let dims = rng.int(1, 3) as usize;
    let block: [i64; 3] = [
        rng.pick(&[8, 16, 32, 64]),
        if dims > 1 { rng.pick(&[1, 2, 4]) } else { 1 },
        if dims > 2 { rng.pick(&[1, 2]) } else { 1 },
    ];
    let grid: [i64; 3] = [
        rng.int(1, 4),
        if dims > 1 { rng.int(1, 3) } else { 1 },
        if dims > 2 { rng.int(1, 2) } else { 1 },
    ];
    let threads = block.iter().product::<i64>();
    let total = threads * grid.iter().product::<i64>();
    let lens = [rng.int(16, 2048) as u64, rng.int(16, 2048) as u64];
    let scalars = [rng.int(1, 12), rng.int(1, 6)];
    let mut k = Ptx {
        rng,
        body: String::new(),
        r: 0,
        rd: 0,
        p: 0,
        f: 0,
        labels: 0,
    };
    let xyz = ["x", "y", "z"];
    // Parameters, as nvcc loads them.
    let mut bases = Vec::new();
    for i in 0..2 {
        let raw = k.rd();
        k.line(format!("ld.param.u64 \t{raw}, [rk_param_{i}];"));
        let g = k.rd();
        k.line(format!("cvta.to.global.u64 \t{g}, {raw};"));
        bases.push(g);
    }
    let out_raw = k.rd();
    k.line(format!("ld.param.u64 \t{out_raw}, [rk_param_2];"));
    let mut scalar_regs = Vec::new();
    for i in 0..2 {
        let s = k.r();
        k.line(format!("ld.param.u32 \t{s}, [rk_param_{}];", 3 + i));
        scalar_regs.push(s);
    }
    let mut vars = Vars {
        g: Vec::new(),
        tid: Vec::new(),
        ctaid: Vec::new(),
        scalars: scalar_regs,
    };
    for d in xyz.iter().take(dims) {
        let (t, c, n, g) = (k.r(), k.r(), k.r(), k.r());
        k.line(format!("mov.u32 \t{t}, %tid.{d};"));
        k.line(format!("mov.u32 \t{c}, %ctaid.{d};"));
        k.line(format!("mov.u32 \t{n}, %ntid.{d};"));
        k.line(format!("mad.lo.s32 \t{g}, {c}, {n}, {t};"));
        vars.tid.push(t);
        vars.ctaid.push(c);
        vars.g.push(g);
    }
    if k.rng.chance(40) {
        // A 2-D position from a 1-D index (`row = i / w; col = i % w`).
        let w = k.rng.int(2, 24);
        let (q, r) = (k.r(), k.r());
        let g = vars.g[0].clone();
        k.line(format!("div.u32 \t{q}, {g}, {w};"));
        k.line(format!("rem.u32 \t{r}, {g}, {w};"));
        vars.g.push(q);
        vars.g.push(r);
    }
    // The thread's linear id in the grid, for its output element.
    let (tx, ty, tz) = (k.r(), k.r(), k.r());
    let (cx, cy, cz) = (k.r(), k.r(), k.r());
    for (r, s) in [(&tx, "%tid.x"), (&ty, "%tid.y"), (&tz, "%tid.z")] {
        k.line(format!("mov.u32 \t{r}, {s};"));
    }
    for (r, s) in [(&cx, "%ctaid.x"), (&cy, "%ctaid.y"), (&cz, "%ctaid.z")] {
        k.line(format!("mov.u32 \t{r}, {s};"));
    }
    let (t1, t2, b1, b2, lin) = (k.r(), k.r(), k.r(), k.r(), k.r());
    k.line(format!("mad.lo.s32 \t{t1}, {tz}, {}, {ty};", block[1]));
    k.line(format!("mad.lo.s32 \t{t2}, {t1}, {}, {tx};", block[0]));
    k.line(format!("mad.lo.s32 \t{b1}, {cz}, {}, {cy};", grid[1]));
    k.line(format!("mad.lo.s32 \t{b2}, {b1}, {}, {cx};", grid[0]));
    k.line(format!("mad.lo.s32 \t{lin}, {b2}, {threads}, {t2};"));
    let acc = k.f();
    k.line(format!("mov.f32 \t{acc}, 0f00000000;"));
    let ret = "$L__BB0_ret".to_string();
    let early = k.rng.chance(40);
    if early {
        // `if (g >= bound) return;` before the rest, barriers included.
        let g = vars.g[k.rng.next() as usize % vars.g.len()].clone();
        let p = k.p();
        let bound = k.rng.int(1, 48);
        k.line(format!("setp.ge.s32 \t{p}, {g}, {bound};"));
        k.line(format!("@{p} bra \t{ret};"));
    }
    let statements = k.rng.int(1, 4);
    let mut staged = false;
    for _ in 0..statements {
        let which = k.rng.next() as usize % 2;
        let (base, len) = (bases[which].clone(), lens[which]);
        match k.rng.int(0, 3) {
            0 => {
                let idx = affine(&mut k, &vars, &[]);
                guarded_load(&mut k, &vars, &base, len, &idx, &acc);
            }
            1 => counted_loop(&mut k, &vars.clone_ref(), &mut |k, i| {
                let idx = affine(k, &vars, &[i.to_string()]);
                guarded_load(k, &vars, &base, len, &idx, &acc);
            }),
            2 => counted_loop(&mut k, &vars.clone_ref(), &mut |k, i| {
                let i = i.to_string();
                counted_loop(k, &vars, &mut |k, j| {
                    let idx = affine(k, &vars, &[i.clone(), j.to_string()]);
                    guarded_load(k, &vars, &base, len, &idx, &acc);
                });
            }),
            _ => {
                // Shared-memory staging: each thread stores what it loaded at its own slot,
                // the TB meets at a barrier, each reads a neighbour's slot.
                staged = true;
                let v = k.f();
                k.line(format!("mov.f32 \t{v}, 0f00000000;"));
                let idx = affine(&mut k, &vars, &[]);
                guarded_load(&mut k, &vars, &base, len, &idx, &v);
                let (o1, o2, sh, n, o3, o4, s2) =
                    (k.rd(), k.rd(), k.rd(), k.r(), k.r(), k.rd(), k.rd());
                k.line(format!("mov.u64 \t{sh}, stage;"));
                k.line(format!("mul.wide.u32 \t{o1}, {t2}, 4;"));
                k.line(format!("add.s64 \t{o2}, {sh}, {o1};"));
                k.line(format!("st.shared.f32 \t[{o2}], {v};"));
                k.line("bar.sync \t0;");
                let shift = k.rng.int(1, threads.max(2) - 1);
                k.line(format!("add.s32 \t{n}, {t2}, {shift};"));
                k.line(format!("rem.u32 \t{o3}, {n}, {threads};"));
                k.line(format!("mul.wide.u32 \t{o4}, {o3}, 4;"));
                k.line(format!("add.s64 \t{s2}, {sh}, {o4};"));
                let w = k.f();
                k.line(format!("ld.shared.f32 \t{w}, [{s2}];"));
                k.line(format!("add.f32 \t{acc}, {acc}, {w};"));
                k.line("bar.sync \t0;");
            }
        }
    }
    // The output: out[lin] = acc.
    let (og, oo, oa) = (k.rd(), k.rd(), k.rd());
    k.line(format!("cvta.to.global.u64 \t{og}, {out_raw};"));
    k.line(format!("mul.wide.u32 \t{oo}, {lin}, 4;"));
    k.line(format!("add.s64 \t{oa}, {og}, {oo};"));
    k.line(format!("st.global.f32 \t[{oa}], {acc};"));
    k.place(&ret);
    k.line("ret;");
    let shared = if staged {
        format!("\t.shared .align 4 .b8 stage[{}];\n", threads * 4)
    } else {
        String::new()
    };
    let ptx = format!(
        "//\n// paver oracle kernel, seed {seed}\n//\n\n.version 7.0\n.target sm_70\n.address_size 64\n\n\
         .visible .entry rk(\n\t.param .u64 rk_param_0,\n\t.param .u64 rk_param_1,\n\t.param .u64 rk_param_2,\n\
         \t.param .u32 rk_param_3,\n\t.param .u32 rk_param_4\n)\n{{\n\
         \t.reg .pred \t%p<{}>;\n\t.reg .f32 \t%f<{}>;\n\t.reg .b32 \t%r<{}>;\n\t.reg .b64 \t%rd<{}>;\n{shared}\n{}}}\n",
        k.p + 1,
        k.f + 1,
        k.r + 1,
        k.rd + 1,
        k.body
    );
    let launch = format!(
        r#"{{"format": "paver-launch/1", "kernel": "rk", "grid": [{}, {}, {}], "block": [{}, {}, {}],
  "params": [
    {{"index": 0, "buffer": {{"type": "f32", "len": {}, "init": "rand(1)"}}}},
    {{"index": 1, "buffer": {{"type": "f32", "len": {}, "init": "rand(2)"}}}},
    {{"index": 2, "buffer": {{"type": "f32", "len": {total}, "init": "zeros"}}}},
    {{"index": 3, "value": {}}},
    {{"index": 4, "value": {}}}
  ]}}
"#,
        grid[0],
        grid[1],
        grid[2],
        block[0],
        block[1],
        block[2],
        lens[0],
        lens[1],
        scalars[0],
        scalars[1]
    );
    Kernel { ptx, launch }
}

impl Vars {
    /// The same registers (the loops' closures borrow `vars` while the loop emitter reads
    /// the scalars).
    fn clone_ref(&self) -> Vars {
        Vars {
            g: self.g.clone(),
            tid: self.tid.clone(),
            ctaid: self.ctaid.clone(),
            scalars: self.scalars.clone(),
        }
    }
}

/// `paver analyze` of the kernel in `dir` (`k.ptx`, `k.json`), with `--footprints`.
fn analyze(dir: &std::path::Path, extra: &[&str]) -> Value {
    let (ptx, launch) = (dir.join("k.ptx"), dir.join("k.json"));
    super::analyze::analyze(ptx.to_str().unwrap(), launch.to_str().unwrap(), extra)
}

/// What one kernel showed: fully compared, or with loads the analysis left out.
enum Outcome {
    Exact,
    Partial,
}

/// Checks kernel `seed`; the error says what differs.
fn check(seed: u64, dir: &std::path::Path) -> Result<Outcome, String> {
    let k = generate(seed);
    std::fs::write(dir.join("k.ptx"), &k.ptx).unwrap();
    std::fs::write(dir.join("k.json"), &k.launch).unwrap();
    let st = analyze(dir, &[]);
    let dy = analyze(dir, &["--dynamic"]);
    let (sl, dl) = (
        st["loads"].as_array().unwrap(),
        dy["loads"].as_array().unwrap(),
    );
    if sl.len() != dl.len() {
        return Err(format!("{} static loads, {} dynamic", sl.len(), dl.len()));
    }
    let mut all = true;
    for (s, d) in sl.iter().zip(dl) {
        let line = &s["line"];
        match s["coverage"].as_str().unwrap() {
            "in_graph" => {
                if s["reads"] != d["reads"] {
                    return Err(format!(
                        "load at line {line}: static reads {} but the run read {}",
                        s["reads"], d["reads"]
                    ));
                }
            }
            "never_executed" => {
                if d["coverage"] != "never_executed" {
                    return Err(format!(
                        "load at line {line}: proved never executed, but the run read {}",
                        d["reads"]
                    ));
                }
            }
            other => {
                all = false;
                if s["reason"].as_str().is_none_or(str::is_empty) {
                    return Err(format!("load at line {line}: {other} without a reason"));
                }
            }
        }
    }
    if !all {
        return Ok(Outcome::Partial);
    }
    if super::analyze::per_tb(&st) != super::analyze::per_tb(&dy) {
        return Err("every load resolved, but the per-TB footprints differ".into());
    }
    if st["stats"] != dy["stats"] {
        return Err(format!(
            "every load resolved, but the statistics differ: {} / {}",
            st["stats"], dy["stats"]
        ));
    }
    Ok(Outcome::Exact)
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn oracle_random_kernels_static_equals_dynamic() {
    let count = env_u64("PAVER_ORACLE_COUNT", 40);
    let first = env_u64("PAVER_ORACLE_SEED", 1);
    let dir = std::env::temp_dir().join(format!("paver-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut exact, mut partial) = (0u64, 0u64);
    for seed in first..first + count {
        match check(seed, &dir) {
            Ok(Outcome::Exact) => exact += 1,
            Ok(Outcome::Partial) => partial += 1,
            Err(e) => panic!(
                "oracle seed {seed}: {e}\nkernel and launch: {}/k.ptx, k.json \
                 (PAVER_ORACLE_SEED={seed} PAVER_ORACLE_COUNT=1 reproduces it)",
                dir.display()
            ),
        }
    }
    if std::env::var_os("PAVER_ORACLE_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    eprintln!(
        "oracle: {count} kernels from seed {first}: {exact} exact, {partial} with loads left out"
    );
    // The generator's loads are all data-independent: most kernels must compare fully, or
    // the oracle tests nothing.
    assert!(exact * 10 >= count * 8, "{exact} of {count} compared fully");
}
