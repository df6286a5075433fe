//! Synthetic locality graphs shaped like real kernels, for benchmarks, examples and tests.
//!
//! * GEMM on a `side x side` grid of TBs: TB (x, y) reads a row strip of A shared with
//!   every TB of row y and a column strip of B shared with every TB of column x. With
//!   16x16 tiles the matrix is `N = 16 * side` wide and a strip holds `16 * N * 4 / 128 =
//!   N / 2` lines of 128 B; the edge weight is kept simple as `N / 32`. Every TB has
//!   `2 * (side - 1)` neighbours: `side^2 * (side - 1)` edges (16.7 M at 65,536 TBs).
//! * Stencil on a `side x side` grid: 4-neighbour edges of weight 2 (halo lines).

use crate::graph::Graph;

/// GEMM-like locality graph over `side * side` TBs (id = x + y * side).
pub fn gemm(side: u32) -> Graph {
    let w = u64::from(side) * 16 / 32;
    let s = side;
    let rows = (0..s).flat_map(move |y| {
        (0..s).flat_map(move |x1| (x1 + 1..s).map(move |x2| (x1 + y * s, x2 + y * s, w)))
    });
    let cols = (0..s).flat_map(move |x| {
        (0..s).flat_map(move |y1| (y1 + 1..s).map(move |y2| (x + y1 * s, x + y2 * s, w)))
    });
    Graph::from_checked_edges(s * s, rows.chain(cols))
}

/// 5-point-stencil locality graph over `side * side` TBs.
pub fn stencil(side: u32) -> Graph {
    let s = side;
    let right = (0..s)
        .flat_map(move |y| (0..s.saturating_sub(1)).map(move |x| (x + y * s, x + 1 + y * s, 2)));
    let down = (0..s.saturating_sub(1))
        .flat_map(move |y| (0..s).map(move |x| (x + y * s, x + (y + 1) * s, 2)));
    Graph::from_checked_edges(s * s, right.chain(down))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let g = gemm(8);
        assert_eq!((g.num_tbs(), g.num_edges()), (64, 64 * 7));
        assert_eq!(g.weight(0, 7), 4);
        assert_eq!(g.weight(0, 9), 0);
        let s = stencil(4);
        assert_eq!((s.num_tbs(), s.num_edges()), (16, 24));
    }
}
