//! Two runs' locality ledgers side by side (`paver report --ledger A.json B.json`): the
//! stats of `paver simulate --explain` ([`sim::timing::ledger`]) of the same launch under
//! two policies, as one Markdown table of totals and the TBs that refetched most.

use std::fmt::Write as _;

use sim::timing::ledger::{Ledger, TbEntry};

/// One run: its label (the TB and warp policies) and the parts of its stats compared.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Explained {
    /// Kernel name.
    pub kernel: String,
    /// TB policy.
    pub tb_policy: String,
    /// Warp policy.
    pub warp_policy: String,
    /// TBs in the grid.
    pub tbs: u64,
    /// Core cycles.
    pub cycles: u64,
    /// The ledger (`None`: the run was made without `--explain`).
    #[serde(default)]
    pub ledger: Option<Ledger>,
}

/// Why two stats cannot be compared.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// A stats file without a ledger.
    #[error("{0}: no `ledger` in these stats (run `paver simulate --explain`)")]
    NoLedger(String),
    /// Two different launches.
    #[error("the runs are of different launches ({0})")]
    Different(String),
}

/// The Markdown comparison of `a` and `b` (named `names` in messages).
pub fn compare(a: &Explained, b: &Explained, names: [&str; 2]) -> Result<String, LedgerError> {
    let la = a
        .ledger
        .as_ref()
        .ok_or_else(|| LedgerError::NoLedger(names[0].into()))?;
    let lb = b
        .ledger
        .as_ref()
        .ok_or_else(|| LedgerError::NoLedger(names[1].into()))?;
    if a.kernel != b.kernel || a.tbs != b.tbs {
        return Err(LedgerError::Different(format!(
            "{} with {} TBs, {} with {} TBs",
            a.kernel, a.tbs, b.kernel, b.tbs
        )));
    }
    let (sa, sb) = (&la.summary, &lb.summary);
    let (ca, cb) = (&sa.counts, &sb.counts);
    let mut out = String::new();
    let label = |r: &Explained| format!("{} / {} warps", r.tb_policy, r.warp_policy);
    let _ = writeln!(out, "# Locality ledgers: {} ({} TBs)\n", a.kernel, a.tbs);
    let _ = writeln!(out, "| | A: {} | B: {} | B / A |", label(a), label(b));
    let _ = writeln!(out, "|---|---:|---:|---:|");
    let ratio = |x: f64, y: f64| {
        if x == 0.0 {
            "-".to_string()
        } else {
            format!("{:.2}", y / x)
        }
    };
    let mut row = |name: &str, x: f64, y: f64, float: bool| {
        let f = |v: f64| {
            if float {
                format!("{v:.2}")
            } else {
                format!("{v:.0}")
            }
        };
        let _ = writeln!(out, "| {name} | {} | {} | {} |", f(x), f(y), ratio(x, y));
    };
    let u = |v: u64| v as f64;
    row("cycles", u(a.cycles), u(b.cycles), false);
    row("L1 reads", u(ca.reads), u(cb.reads), false);
    row("hits on own lines", u(ca.hits_own), u(cb.hits_own), false);
    row(
        "hits on other TBs' lines",
        u(ca.hits_shared),
        u(cb.hits_shared),
        false,
    );
    row(
        "merges into own MSHRs",
        u(ca.merges_own),
        u(cb.merges_own),
        false,
    );
    row(
        "merges into other TBs' MSHRs",
        u(ca.merges_shared),
        u(cb.merges_shared),
        false,
    );
    row("misses (L2 reads)", u(ca.misses), u(cb.misses), false);
    row(
        "refetches (misses of a block the TB had missed)",
        u(ca.refetches),
        u(cb.refetches),
        false,
    );
    row(
        "TBs resident beside a TB at its start",
        sa.mean_co_resident,
        sb.mean_co_resident,
        true,
    );
    row(
        "of those, serving it a hit or merge",
        sa.mean_serving_co_resident,
        sb.mean_serving_co_resident,
        true,
    );
    row("cycles per TB", sa.mean_tb_cycles, sb.mean_tb_cycles, false);
    for (name, l) in [("A", la), ("B", lb)] {
        let _ = writeln!(out, "\n## {name}: the TBs that refetched most\n");
        let _ = writeln!(
            out,
            "| TB | SM | order | start | end | beside it at start | misses | refetches | served by (TB: reads) |"
        );
        let _ = writeln!(out, "|---:|---:|---:|---:|---:|---|---:|---:|---|");
        let mut worst: Vec<&TbEntry> = l.tbs.iter().collect();
        worst.sort_by_key(|e| (std::cmp::Reverse(e.counts.refetches), e.tb));
        for e in worst.iter().take(10) {
            let served: Vec<String> = e
                .served_by
                .iter()
                .take(4)
                .map(|(t, n)| format!("{t}: {n}"))
                .collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {:?} | {} | {} | {} |",
                e.tb,
                e.sm,
                e.order,
                e.start,
                e.end,
                e.co_resident,
                e.counts.misses,
                e.counts.refetches,
                served.join(", ")
            );
        }
    }
    Ok(out)
}
