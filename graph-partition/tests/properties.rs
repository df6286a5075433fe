//! Property tests on random graphs: coverage, group-size bounds, determinism, and Prim
//! against Kruskal.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use graph_partition::mst::{kruskal_forest_weight, prim_order};
use graph_partition::policy::{KwayTs, RbTs};
use graph_partition::{make_schedule, Graph, Launch, Params, Policy, PolicyKind, Schedule};
use proptest::prelude::*;

fn arb_graph() -> impl Strategy<Value = Graph> {
    (0u32..48).prop_flat_map(|n| {
        let edge = (0..n.max(1), 0..n.max(1), 1u64..100);
        proptest::collection::vec(edge, 0..(n as usize * 3 + 1))
            .prop_map(move |edges| Graph::from_edges(n, &edges).unwrap())
    })
}

fn arb_params() -> impl Strategy<Value = Params> {
    (1u32..6, 1u32..7, any::<bool>()).prop_map(|(n, x, strict)| {
        let mut p = Params::new(n, x);
        p.strict_less = strict;
        p
    })
}

fn assert_partition(groups: &[Vec<u32>], n: u32) -> Result<(), TestCaseError> {
    let mut seen = vec![false; n as usize];
    for g in groups {
        prop_assert!(!g.is_empty());
        for &tb in g {
            prop_assert!(tb < n);
            prop_assert!(!seen[tb as usize], "TB {} twice", tb);
            seen[tb as usize] = true;
        }
    }
    prop_assert!(seen.iter().all(|&s| s), "a TB is missing");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn every_policy_covers_every_tb_once_and_is_deterministic(g in arb_graph(), p in arb_params()) {
        for kind in PolicyKind::ALL {
            let a = kind.policy().groups(&g, &p).unwrap();
            assert_partition(&a, g.num_tbs())?;
            let b = kind.policy().groups(&g, &p).unwrap();
            prop_assert_eq!(a, b, "{:?} not deterministic", kind);
        }
    }

    #[test]
    fn rb_ts_leaves_fit(g in arb_graph(), p in arb_params()) {
        let x = p.tbs_per_sm as usize;
        for leaf in RbTs.groups(&g, &p).unwrap() {
            if p.strict_less {
                prop_assert!(leaf.len() < x || leaf.len() == 1, "leaf {:?} with x = {}", leaf, x);
            } else {
                prop_assert!(leaf.len() <= x, "leaf {:?} with x = {}", leaf, x);
            }
        }
    }

    #[test]
    fn kway_ts_parts_balanced(g in arb_graph(), p in arb_params()) {
        let groups = KwayTs.groups(&g, &p).unwrap();
        if g.num_edges() == 0 {
            // `--edgeless-lrr`: nothing to group by, LRR's groups (`policy::without_locality`).
            let lrr: Vec<Vec<u32>> = (0..g.num_tbs()).map(|tb| vec![tb]).collect();
            let q = Params { edgeless_lrr: true, ..p.clone() };
            prop_assert_eq!(KwayTs.groups(&g, &q).unwrap(), lrr);
        }
        let k = p.num_sms.min(g.num_tbs().max(1));
        let cap = graph_partition::policy::kway_cap(g.num_tbs(), k, p.kway_ufactor) as usize;
        prop_assert!(groups.len() <= k as usize);
        for part in &groups {
            prop_assert!(part.len() <= cap, "part of {} > cap {}", part.len(), cap);
        }
    }

    #[test]
    fn the_lrr_floor_is_taken_exactly_when_the_policy_keeps_less_than_lrr(
        g in arb_graph(),
        p in arb_params(),
    ) {
        // `--at-least-lrr`: Kway-TS and RB-TS keep their own groups when they keep at
        // least LRR's co-running weight, else take LRR's (and say so); off, never.
        use graph_partition::quality::{lrr_quality, quality};
        let lrr = lrr_quality(&g, p.num_sms, p.tbs_per_sm).concurrent_weight;
        let launch = Launch { kernel: "k".into(), grid: [g.num_tbs(), 1, 1], block: [32, 1, 1] };
        let floored = Params { at_least_lrr: true, ..p.clone() };
        for policy in [&KwayTs as &dyn Policy, &RbTs] {
            let own = policy.groups(&g, &p).unwrap();
            let ours = quality(&g, &own, p.num_sms, p.tbs_per_sm).concurrent_weight;
            let plain = make_schedule(&g, policy, &p, &launch).unwrap();
            prop_assert_eq!(&plain.groups, &own);
            prop_assert!(!plain.stats.as_ref().unwrap().departures.lrr_floor_taken);
            let f = make_schedule(&g, policy, &floored, &launch).unwrap();
            let st = f.stats.unwrap();
            prop_assert!(st.departures.at_least_lrr);
            prop_assert_eq!(st.departures.lrr_floor_taken, ours < lrr);
            prop_assert!(st.quality.concurrent_weight >= lrr);
            if ours < lrr {
                prop_assert_eq!(f.groups, (0..g.num_tbs()).map(|tb| vec![tb]).collect::<Vec<_>>());
            } else {
                prop_assert_eq!(f.groups, own);
            }
        }
    }

    #[test]
    fn mst_ts_group_sizes(g in arb_graph(), p in arb_params()) {
        let groups = graph_partition::policy::MstTs.groups(&g, &p).unwrap();
        let head = (p.num_sms as usize * p.tbs_per_sm as usize).min(g.num_tbs() as usize);
        let mut covered = 0;
        for grp in &groups {
            if covered < head {
                prop_assert!(grp.len() <= p.tbs_per_sm as usize);
            } else {
                prop_assert_eq!(grp.len(), 1);
            }
            covered += grp.len();
        }
        let order: Vec<u32> = groups.concat();
        prop_assert_eq!(order, prim_order(&g).order);
    }

    #[test]
    fn prim_matches_kruskal(g in arb_graph()) {
        let f = prim_order(&g);
        prop_assert_eq!(f.weight, kruskal_forest_weight(&g));
        let mut sorted = f.order.clone();
        sorted.sort_unstable();
        prop_assert_eq!(sorted, (0..g.num_tbs()).collect::<Vec<_>>());
    }

    #[test]
    fn schedule_json_roundtrip(g in arb_graph(), p in arb_params()) {
        let launch = Launch { kernel: "k".into(), grid: [g.num_tbs(), 1, 1], block: [32, 1, 1] };
        let s = make_schedule(&g, &*PolicyKind::RbTs.policy(), &p, &launch).unwrap();
        let back = Schedule::from_json(&s.to_json().unwrap()).unwrap();
        prop_assert_eq!(back.groups, s.groups);
        let q = s.stats.unwrap().quality;
        prop_assert!(q.concurrent_weight <= q.same_sm_weight);
        prop_assert!(q.same_sm_weight <= q.total_weight);
    }
}
