//! Distributed-block scheduling (ICC paper §5): distributed at the cluster level, BCS pairs
//! at the SM level (a pair only when two contexts are free).

use super::Distributed;

/// Distributed-block over `num_sms` SMs in clusters of `sms_per_cluster`.
pub fn distributed_block(num_tbs: u32, num_sms: u32, sms_per_cluster: u32) -> Distributed {
    Distributed::new(num_tbs, num_sms, sms_per_cluster, 2)
}

#[cfg(test)]
mod tests {
    use super::super::tests::drive;
    use super::*;

    #[test]
    fn pairs_in_cluster() {
        let seq = drive(&mut distributed_block(10, 4, 2), 4, 2, 1);
        assert_eq!(seq, vec![vec![0, 1], vec![2, 3], vec![5, 6], vec![7, 8]]);
        // With one free context an SM waits.
        let seq = drive(&mut distributed_block(10, 2, 2), 2, 1, 3);
        assert!(seq.iter().all(Vec::is_empty));
    }
}
