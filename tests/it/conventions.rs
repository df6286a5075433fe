//! One command-line convention: every subcommand's `--help` shows an example, the shared
//! flags have one name everywhere (`--max-instructions`, `--registers`, `--tbs-per-sm`,
//! `--gpu`, `-o`, `--quiet`), C++ kernel names are demangled for people and accepted by
//! `--kernel` in either form, and nothing but the results reaches a non-terminal stderr.

use crate::common::{paver, paver_err, paver_ok, root};

const SUBCOMMANDS: [&str; 10] = [
    "parse",
    "compile",
    "inspect",
    "launch",
    "analyze",
    "partition",
    "run",
    "simulate",
    "sweep",
    "report",
];

#[test]
fn every_subcommand_help_has_an_example() {
    for cmd in SUBCOMMANDS {
        let help = paver_ok(&[cmd, "--help"]);
        let ex = help
            .split("Examples:")
            .nth(1)
            .unwrap_or_else(|| panic!("paver {cmd} --help has no Examples:\n{help}"));
        assert!(
            ex.contains(&format!("paver {cmd} ")),
            "paver {cmd} --help: the example does not run `paver {cmd}`:\n{ex}"
        );
    }
}

#[test]
fn shared_flags_have_one_name() {
    // (flag, the subcommands that take it)
    let flags: [(&str, &[&str]); 7] = [
        (
            "--nvrtc-opt",
            &[
                "parse", "inspect", "launch", "analyze", "run", "simulate", "compile",
            ],
        ),
        ("--max-instructions", &["analyze", "run", "simulate"]),
        ("--registers", &["analyze", "partition", "simulate"]),
        ("--tbs-per-sm", &["analyze", "partition", "simulate"]),
        ("--gpu", &["analyze", "partition", "simulate"]),
        ("--quiet", &["analyze", "partition", "run", "simulate"]),
        (
            "-o, --output",
            &["analyze", "partition", "launch", "run", "simulate"],
        ),
    ];
    for (flag, cmds) in flags {
        for cmd in cmds {
            let help = paver_ok(&[cmd, "--help"]);
            assert!(
                help.contains(flag),
                "paver {cmd} --help lacks {flag}:\n{help}"
            );
        }
    }
    // `simulate` has both: the launch's budget and each TB's (issue 41).
    let help = paver_ok(&["simulate", "--help"]);
    assert!(help.contains("--max-instructions-per-tb <N>"), "{help}");
}

#[test]
fn simulate_budget_message_names_a_flag_it_has() {
    for flag in ["--max-instructions", "--max-instructions-per-tb"] {
        let err = paver_err(&[
            "simulate",
            "kernels/mm_naive/mm_naive.compute_70.ptx",
            "--launch",
            "kernels/mm_naive/small.json",
            flag,
            "50",
            "--quiet",
        ]);
        assert!(err.contains("--max-instructions"), "{err}");
        // The flag the message names is one simulate accepts: raising it runs further.
        assert!(err.contains("budget of 50"), "{err}");
    }
}

/// A copy of the GEMM PTX whose entry carries the mangled C++ name nvcc gives
/// `mm_naive(float const*, float const*, float*, int)` (Itanium ABI: `PKf` = float const*,
/// `S0_` repeats it, `Pf` = float*, `i` = int).
const MANGLED: &str = "_Z8mm_naivePKfS0_Pfi";

fn mangled_copy() -> std::path::PathBuf {
    let text = std::fs::read_to_string(root().join("kernels/mm_naive/mm_naive.compute_70.ptx"))
        .unwrap()
        .replace("mm_naive", MANGLED);
    let path = std::env::temp_dir().join(format!("paver-it-mangled-{}.ptx", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn kernel_names_are_demangled_for_people_and_kept_in_json() {
    let ptx = mangled_copy();
    let ptx = ptx.to_str().unwrap();
    let demangled = "mm_naive(float const*, float const*, float*, int)";
    for kernel in [MANGLED, "mm_naive", demangled] {
        let out = paver_ok(&[
            "analyze",
            ptx,
            "--kernel",
            kernel,
            "--grid",
            "4x4",
            "--block",
            "16x16",
            "--param",
            "3=64",
            "--no-descriptors",
        ]);
        assert!(out.starts_with(&format!("kernel {demangled}:")), "{out}");
    }
    let parse = paver_ok(&["parse", ptx]);
    assert!(
        parse.contains(&format!("entry {demangled}  [{MANGLED}]")),
        "{parse}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&paver_ok(&["parse", ptx, "--json"])).unwrap();
    assert_eq!(json["functions"][0]["name"], MANGLED);
    assert_eq!(json["functions"][0]["demangled"], demangled);
    let err = paver_err(&["inspect", ptx, "--kernel", "mm"]);
    assert!(err.contains(&format!("{MANGLED} ({demangled})")), "{err}");
    let _ = std::fs::remove_file(ptx);
}

#[test]
fn no_progress_output_when_stderr_is_not_a_terminal() {
    // The tests capture stderr through a pipe: progress bars must stay silent there.
    let out = paver(&[
        "simulate",
        "kernels/mm_naive/mm_naive.compute_70.ptx",
        "--launch",
        "kernels/mm_naive/small.json",
        "--tb-policy",
        "lrr",
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains('\r') && !err.contains("\x1b["), "{err:?}");
    assert!(err.lines().all(|l| !l.contains("TBs (")), "{err}");
}
