//! The TB locality graph: undirected, weighted, over TBs `0..n`, with rows shared between
//! TBs of identical neighbourhoods.
//!
//! One type serves the analysis, which builds it ([`Graph::from_shared_rows`], from
//! `analysis::locality::build`), the graph-file writers and every grouping policy, so the
//! analysed graph is partitioned as it is, never copied into a second form.
//!
//! TBs with the same neighbours and weights (GEMM's two TBs per 128 B column band and block
//! row) share one stored row. A shared row lists every TB sharing data with its TBs,
//! possibly *including them*, ascending; TB `i`'s row is the shared row without `i`. Rows
//! are kept in compressed form, in chunks of [`ROW_CHUNK`] consecutive shared rows (built
//! in parallel, never concatenated). Sharing rows halves the memory and the merge work of
//! the 25 M-edge GEMM, and storing both sides of the diagonal spares the symmetric graph
//! files and METIS a transpose.
//!
//! Also built from an edge list ([`Graph::from_edges`]), from the analysis JSON (`{"graph":
//! {"num_tbs": N, "edges": [[i, j, w], ...]}}`) or from a METIS `.graph` file (see
//! `read.rs`), with one row per TB. Self loops and zero weights are dropped (a TB sharing
//! data with itself is not inter-TB locality); parallel edges are merged by summing their
//! weights. Every row is sorted by neighbour id, so every traversal of the graph is
//! deterministic.

use rayon::prelude::*;

use crate::error::{Error, Result};

mod read;

/// TBs per chunk of graph rows (the unit of parallel work), and shared rows per
/// [`RowChunk`].
pub const ROW_CHUNK: u32 = 256;

/// Undirected weighted graph over TBs, each TB's row (neighbours on both sides of the
/// diagonal) stored once per set of TBs with that row (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct Graph {
    num_tbs: u32,
    /// Where each TB's row lies.
    tbs: Vec<TbRow>,
    chunks: Vec<RowChunk>,
    num_edges: u64,
    max_weight: u64,
}

/// A TB's shared row, and how many of its entries lie below the TB. The split is found
/// once, when the graph is made: a binary search in a row not yet in cache is a chain of
/// dependent cache misses, which the partitioners (Prim visits TBs in no useful order) paid
/// at every visit (MST-TS took 1.4x as long on the 25 M-edge GEMM).
#[derive(Clone, Copy, Debug, Default)]
struct TbRow {
    row: u32,
    below: u32,
}

/// [`ROW_CHUNK`] consecutive shared rows (fewer in the last chunk), in compressed form.
///
/// Rows are appended one at a time: the open row's neighbours and weights go to the vectors
/// of [`RowChunk::open_row`] (neighbour ids ascending, positive weights), and
/// [`RowChunk::end_row`] closes it.
#[derive(Clone, Debug, Default)]
pub struct RowChunk {
    /// `offsets[r]..offsets[r + 1]` indexes row `r` of the chunk.
    offsets: Vec<usize>,
    nbrs: Vec<u32>,
    weights: Vec<u64>,
}

/// One side of a TB's row: neighbour ids ascending, and their weights.
pub type RowPart<'g> = (&'g [u32], &'g [u64]);

/// What the builder of shared rows hands to [`Graph::from_shared_rows`].
#[derive(Debug)]
pub struct SharedRows {
    /// Number of TBs.
    pub num_tbs: u32,
    /// The shared row of each TB (an index into the rows of `chunks`, in order).
    pub row_of: Vec<u32>,
    /// The shared rows, [`ROW_CHUNK`] to a chunk (fewer in the last).
    pub chunks: Vec<RowChunk>,
    /// Number of edges `(i, j)`, `i < j`, over the TBs' rows.
    pub num_edges: u64,
    /// The largest weight in the TBs' rows (0 without edges).
    pub max_weight: u64,
}

/// A graph read from a file format that may carry things this crate ignores.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The graph.
    pub graph: Graph,
    /// Remarks about ignored input (vertex weights, self loops...), for the user.
    pub notes: Vec<String>,
}

/// Graph plus the launch information the analysis JSON may carry next to it.
#[derive(Debug, Clone)]
pub struct AnalysisGraph {
    /// The locality graph.
    pub graph: Graph,
    /// Kernel name (`"kernel"` at the top level), if present.
    pub kernel: Option<String>,
    /// Grid dimensions (`"grid": [x, y, z]`), if present.
    pub grid: Option<[u32; 3]>,
    /// Block dimensions (`"block": [x, y, z]`), if present.
    pub block: Option<[u32; 3]>,
}

impl RowChunk {
    /// An empty chunk with room for the offsets of `rows` rows.
    pub fn with_rows(rows: usize) -> RowChunk {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        RowChunk {
            offsets,
            nbrs: Vec::new(),
            weights: Vec::new(),
        }
    }

    /// Number of closed rows.
    pub fn num_rows(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of entries stored, in closed rows and the open one.
    pub fn num_entries(&self) -> usize {
        self.nbrs.len()
    }

    /// Makes room for `entries` more entries.
    pub fn reserve(&mut self, entries: usize) {
        self.nbrs.reserve(entries);
        self.weights.reserve(entries);
    }

    /// The open row's storage: its entries are what these vectors hold past the closed
    /// rows. Append neighbour ids ascending and their weights; leave the closed rows alone.
    pub fn open_row(&mut self) -> (&mut Vec<u32>, &mut Vec<u64>) {
        (&mut self.nbrs, &mut self.weights)
    }

    /// Closes the open row and returns it.
    pub fn end_row(&mut self) -> RowPart<'_> {
        let start = self.offsets[self.offsets.len() - 1];
        debug_assert!(
            self.nbrs.len() == self.weights.len() && self.nbrs.len() >= start,
            "a row's neighbours and weights differ in number, or a closed row was cut"
        );
        self.offsets.push(self.nbrs.len());
        (&self.nbrs[start..], &self.weights[start..])
    }

    /// Row `k`.
    #[inline]
    fn row(&self, k: usize) -> RowPart<'_> {
        let (a, b) = (self.offsets[k], self.offsets[k + 1]);
        (&self.nbrs[a..b], &self.weights[a..b])
    }
}

impl Graph {
    /// A graph with `num_tbs` vertices and no edges (all TBs share one empty row).
    pub fn empty(num_tbs: u32) -> Graph {
        let mut chunk = RowChunk::with_rows(1);
        chunk.end_row();
        Graph {
            num_tbs,
            tbs: vec![TbRow::default(); num_tbs as usize],
            chunks: if num_tbs == 0 {
                Vec::new()
            } else {
                vec![chunk]
            },
            num_edges: 0,
            max_weight: 0,
        }
    }

    /// The graph of shared rows built elsewhere (by the locality analysis), taken as is.
    ///
    /// The rows must describe an undirected graph: ids ascending and below `num_tbs`,
    /// weights positive, `j` in TB `i`'s row (its shared row without `i`) with weight `w`
    /// exactly when `i` is in `j`'s with `w`; `num_edges` and `max_weight` must be the
    /// graph's. Debug builds check all of it (a panic names what is wrong); release builds
    /// trust the builder, since checking would cost a pass over every edge.
    pub fn from_shared_rows(rows: SharedRows) -> Graph {
        let SharedRows {
            num_tbs,
            row_of,
            chunks,
            num_edges,
            max_weight,
        } = rows;
        let g = Graph {
            num_tbs,
            tbs: locate(&chunks, &row_of),
            chunks,
            num_edges,
            max_weight,
        };
        debug_assert_eq!(g.invariant_violation(), None);
        g
    }

    /// Builds a graph from undirected edges `(i, j, w)`. Self loops and zero weights are
    /// dropped; `(i, j)` and `(j, i)` are the same edge and their weights add up.
    pub fn from_edges(num_tbs: u32, edges: &[(u32, u32, u64)]) -> Result<Graph> {
        for (index, &(i, j, _)) in edges.iter().enumerate() {
            for tb in [i, j] {
                if tb >= num_tbs {
                    return Err(Error::TbOutOfRange {
                        index,
                        tb: u64::from(tb),
                        num_tbs,
                    });
                }
            }
        }
        Ok(Self::from_checked_edges(num_tbs, edges.iter().copied()))
    }

    /// Builds the graph, one row per TB, from edges already known to be in range.
    pub(crate) fn from_checked_edges(
        num_tbs: u32,
        edges: impl Iterator<Item = (u32, u32, u64)> + Clone,
    ) -> Graph {
        let n = num_tbs as usize;
        let per_chunk = ROW_CHUNK as usize;
        let keep = |&(i, j, w): &(u32, u32, u64)| i != j && w > 0;
        // Each TB's degree, then where its next entry goes in its chunk.
        let mut slot = vec![0usize; n];
        for (i, j, _) in edges.clone().filter(keep) {
            slot[i as usize] += 1;
            slot[j as usize] += 1;
        }
        let mut chunks: Vec<RowChunk> = slot
            .chunks_mut(per_chunk)
            .map(|tbs| {
                let mut offsets = Vec::with_capacity(tbs.len() + 1);
                let mut acc = 0usize;
                offsets.push(0);
                for s in tbs {
                    let degree = *s;
                    *s = acc;
                    acc += degree;
                    offsets.push(acc);
                }
                RowChunk {
                    offsets,
                    nbrs: vec![0; acc],
                    weights: vec![0; acc],
                }
            })
            .collect();
        for (i, j, w) in edges.filter(keep) {
            for (a, b) in [(i, j), (j, i)] {
                let c = &mut chunks[a as usize / per_chunk];
                let s = &mut slot[a as usize];
                c.nbrs[*s] = b;
                c.weights[*s] = w;
                *s += 1;
            }
        }
        drop(slot);
        // Sort each row by neighbour, merge parallel edges, compact in place (the write
        // position never passes the read position); the chunks in parallel.
        let (entries, max_weight) = chunks
            .par_iter_mut()
            .map_init(Vec::<(u32, u64)>::new, |row, c| {
                let mut out = 0usize;
                for r in 0..c.num_rows() {
                    let (a, b) = (c.offsets[r], c.offsets[r + 1]);
                    row.clear();
                    row.extend(
                        c.nbrs[a..b]
                            .iter()
                            .copied()
                            .zip(c.weights[a..b].iter().copied()),
                    );
                    row.sort_unstable_by_key(|p| p.0);
                    c.offsets[r] = out;
                    let row_start = out;
                    for &(u, w) in row.iter() {
                        if out > row_start && c.nbrs[out - 1] == u {
                            c.weights[out - 1] = c.weights[out - 1].saturating_add(w);
                        } else {
                            c.nbrs[out] = u;
                            c.weights[out] = w;
                            out += 1;
                        }
                    }
                }
                let last = c.num_rows();
                c.offsets[last] = out;
                c.nbrs.truncate(out);
                c.weights.truncate(out);
                c.nbrs.shrink_to_fit();
                c.weights.shrink_to_fit();
                let top = c.weights.iter().copied().max().unwrap_or(0);
                (out as u64, top)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1.max(b.1)));
        let row_of: Vec<u32> = (0..num_tbs).collect();
        Graph {
            num_tbs,
            tbs: locate(&chunks, &row_of),
            chunks,
            num_edges: entries / 2,
            max_weight,
        }
    }

    /// Number of TBs (vertices).
    pub fn num_tbs(&self) -> u32 {
        self.num_tbs
    }

    /// Number of undirected edges `(i, j)`, `i < j`.
    pub fn num_edges(&self) -> u64 {
        self.num_edges
    }

    /// The largest edge weight (0 without edges).
    pub fn max_weight(&self) -> u64 {
        self.max_weight
    }

    /// Number of rows stored: at most one per TB, fewer where TBs share rows.
    pub fn num_stored_rows(&self) -> usize {
        self.chunks.iter().map(RowChunk::num_rows).sum()
    }

    /// Shared row `r`, with the TBs it stands for possibly among the neighbours.
    #[inline]
    fn shared_row(&self, r: u32) -> RowPart<'_> {
        shared_row(&self.chunks, r)
    }

    /// Row `i` on both sides of the diagonal: the neighbours `j < i`, then `j > i`, each
    /// ascending, with their weights.
    #[inline]
    pub fn full_row(&self, i: u32) -> [RowPart<'_>; 2] {
        let TbRow { row, below } = self.tbs[i as usize];
        let (ns, ws) = self.shared_row(row);
        let below = below as usize;
        let above = below + usize::from(ns.get(below) == Some(&i));
        [(&ns[..below], &ws[..below]), (&ns[above..], &ws[above..])]
    }

    /// Row `i` above the diagonal: neighbours `j > i` ascending, and the weights.
    #[inline]
    pub fn row(&self, i: u32) -> RowPart<'_> {
        self.full_row(i)[1]
    }

    /// Neighbours of `tb` with edge weights, sorted by neighbour id (the two parts of
    /// [`Graph::full_row`], chained).
    pub fn neighbours(&self, tb: u32) -> impl Iterator<Item = (u32, u64)> + '_ {
        let [(a, wa), (b, wb)] = self.full_row(tb);
        let below = a.iter().copied().zip(wa.iter().copied());
        below.chain(b.iter().copied().zip(wb.iter().copied()))
    }

    /// Number of neighbours of `tb`.
    pub fn degree(&self, tb: u32) -> usize {
        let [(a, _), (b, _)] = self.full_row(tb);
        a.len() + b.len()
    }

    /// Weight of edge `(i, j)`, 0 when absent (binary search in `i`'s row).
    pub fn weight(&self, i: u32, j: u32) -> u64 {
        if i == j {
            return 0;
        }
        let [below, above] = self.full_row(i);
        let (ns, ws) = if j < i { below } else { above };
        match ns.binary_search(&j) {
            Ok(k) => ws[k],
            Err(_) => 0,
        }
    }

    /// Sum of all edge weights (each undirected edge once).
    pub fn total_weight(&self) -> u128 {
        (0..self.num_tbs)
            .map(|i| self.row(i).1.iter().map(|&w| u128::from(w)).sum::<u128>())
            .sum()
    }

    /// All undirected edges `(i, j, w)` with `i < j`, sorted.
    pub fn edges(&self) -> impl Iterator<Item = (u32, u32, u64)> + '_ {
        (0..self.num_tbs).flat_map(move |i| {
            let (n, w) = self.row(i);
            n.iter().zip(w).map(move |(&j, &w)| (i, j, w))
        })
    }

    /// TBs `ROW_CHUNK * k ..` as parallel work items: `(first TB, number of TBs)`.
    pub fn row_chunks(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.num_tbs.div_ceil(ROW_CHUNK)).map(move |k| {
            let first = k * ROW_CHUNK;
            (first, ROW_CHUNK.min(self.num_tbs - first))
        })
    }

    /// Writes the graph as METIS `.graph` text (fmt `001`, 1-based).
    pub fn to_metis_string(&self) -> String {
        let mut s = format!("{} {} 001\n", self.num_tbs(), self.num_edges());
        for v in 0..self.num_tbs() {
            let row: Vec<String> = self
                .neighbours(v)
                .map(|(u, w)| format!("{} {w}", u + 1))
                .collect();
            s.push_str(&row.join(" "));
            s.push('\n');
        }
        s
    }

    /// What breaks the representation's invariants (see [`Graph::from_shared_rows`]), if
    /// anything: a pass over every edge, for debug builds and tests.
    fn invariant_violation(&self) -> Option<String> {
        if self.tbs.len() != self.num_tbs as usize {
            return Some(format!(
                "{} TBs but {} row numbers",
                self.num_tbs,
                self.tbs.len()
            ));
        }
        let last = self.chunks.len().saturating_sub(1);
        let mut num_rows = 0u64;
        for (k, c) in self.chunks.iter().enumerate() {
            let rows = c.offsets.len().saturating_sub(1);
            if rows == 0 || rows > ROW_CHUNK as usize || (k < last && rows != ROW_CHUNK as usize) {
                return Some(format!("chunk {k} holds {rows} rows"));
            }
            if c.offsets[0] != 0
                || c.offsets.windows(2).any(|o| o[0] > o[1])
                || c.offsets[rows] != c.nbrs.len()
                || c.nbrs.len() != c.weights.len()
            {
                return Some(format!("chunk {k}: offsets do not index its entries"));
            }
            num_rows += rows as u64;
            for r in 0..rows {
                let (ns, ws) = c.row(r);
                if ns.windows(2).any(|p| p[0] >= p[1])
                    || ns.last().is_some_and(|&j| j >= self.num_tbs)
                    || ws.contains(&0)
                {
                    return Some(format!(
                        "shared row {}: ids not ascending or out of range, or a zero weight",
                        k * ROW_CHUNK as usize + r
                    ));
                }
            }
        }
        if let Some(i) = self.tbs.iter().position(|t| u64::from(t.row) >= num_rows) {
            return Some(format!("TB {i}: row {} of {num_rows}", self.tbs[i].row));
        }
        for (i, t) in (0..self.num_tbs).zip(&self.tbs) {
            let (ns, _) = self.shared_row(t.row);
            if ns.partition_point(|&j| j < i) != t.below as usize {
                return Some(format!("TB {i}: its split in row {} is wrong", t.row));
            }
        }
        let (mut entries, mut top) = (0u64, 0u64);
        for i in 0..self.num_tbs {
            for (j, w) in self.neighbours(i) {
                if self.weight(j, i) != w {
                    return Some(format!("edge ({i}, {j}, {w}) is not in TB {j}'s row"));
                }
                entries += 1;
                top = top.max(w);
            }
        }
        if entries != 2 * self.num_edges || top != self.max_weight {
            return Some(format!(
                "{} edges, largest weight {top}; said {} and {}",
                entries / 2,
                self.num_edges,
                self.max_weight
            ));
        }
        None
    }
}

/// Shared row `r` of `chunks`.
#[inline]
fn shared_row(chunks: &[RowChunk], r: u32) -> RowPart<'_> {
    chunks[(r / ROW_CHUNK) as usize].row((r % ROW_CHUNK) as usize)
}

/// Each TB's row in `chunks` (`row_of[i]`, TB `i`'s shared row) and where it splits.
fn locate(chunks: &[RowChunk], row_of: &[u32]) -> Vec<TbRow> {
    row_of
        .par_iter()
        .enumerate()
        .map(|(i, &row)| {
            let (ns, _) = shared_row(chunks, row);
            let below = ns.partition_point(|&j| (j as usize) < i);
            TbRow {
                row,
                below: below as u32,
            }
        })
        .collect()
}

/// Graphs are equal when their TBs' rows are: how rows are shared does not matter.
impl PartialEq for Graph {
    fn eq(&self, other: &Graph) -> bool {
        self.num_tbs == other.num_tbs
            && self.num_edges == other.num_edges
            && (0..self.num_tbs).all(|i| self.full_row(i) == other.full_row(i))
    }
}

impl Eq for Graph {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_parallel_edges_and_drops_self_loops() {
        let g = Graph::from_edges(3, &[(0, 1, 2), (1, 0, 3), (2, 2, 9), (1, 2, 0)]).unwrap();
        assert_eq!(g.num_edges(), 1);
        assert_eq!(g.weight(0, 1), 5);
        assert_eq!(g.weight(1, 0), 5);
        assert_eq!(g.weight(1, 2), 0);
        assert_eq!(g.weight(1, 1), 0);
        assert_eq!(g.total_weight(), 5);
        assert_eq!(g.max_weight(), 5);
        assert_eq!(g.invariant_violation(), None);
    }

    #[test]
    fn out_of_range_edge_is_located() {
        let e = Graph::from_edges(2, &[(0, 1, 1), (1, 2, 1)]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::TbOutOfRange {
                    index: 1,
                    tb: 2,
                    ..
                }
            ),
            "{e}"
        );
    }

    /// The obvious CSR of an edge list, rows sorted, parallel edges summed.
    fn csr_rows(n: u32, edges: &[(u32, u32, u64)]) -> Vec<Vec<(u32, u64)>> {
        let mut rows = vec![std::collections::BTreeMap::<u32, u64>::new(); n as usize];
        for &(i, j, w) in edges {
            if i != j && w > 0 {
                *rows[i as usize].entry(j).or_default() += w;
                *rows[j as usize].entry(i).or_default() += w;
            }
        }
        rows.into_iter().map(|r| r.into_iter().collect()).collect()
    }

    #[test]
    fn rows_span_chunks_like_the_plain_csr() {
        // More TBs than one chunk holds, edges across chunk borders, repeated edges.
        let n = 2 * ROW_CHUNK + 7;
        let mut edges = Vec::new();
        for i in 0..n {
            edges.push((i, (i * 37 + 11) % n, u64::from(i % 5)));
            edges.push(((i * 101) % n, i, 3));
        }
        let g = Graph::from_edges(n, &edges).unwrap();
        assert_eq!(g.invariant_violation(), None);
        let want = csr_rows(n, &edges);
        for i in 0..n {
            assert_eq!(g.neighbours(i).collect::<Vec<_>>(), want[i as usize], "{i}");
            assert_eq!(g.degree(i), want[i as usize].len());
        }
        let entries: usize = want.iter().map(Vec::len).sum();
        assert_eq!(g.num_edges(), entries as u64 / 2);
        assert_eq!(
            g.max_weight(),
            want.iter().flatten().map(|e| e.1).max().unwrap_or(0)
        );
        assert_eq!(Graph::empty(5), Graph::from_edges(5, &[]).unwrap());
        assert_eq!(Graph::empty(0), Graph::default());
    }

    #[test]
    fn shared_rows_are_rows_without_their_tb() {
        // TBs 0 and 1 read the same data (their shared row holds both), TB 2 shares with
        // both, TB 3 reads alone.
        let mut c = RowChunk::with_rows(3);
        let (ns, ws) = c.open_row();
        ns.extend([0, 1, 2]);
        ws.extend([4, 4, 1]);
        assert_eq!(c.end_row(), (&[0, 1, 2][..], &[4, 4, 1][..]));
        let (ns, ws) = c.open_row();
        ns.extend([0, 1]);
        ws.extend([1, 1]);
        c.end_row();
        c.end_row();
        assert_eq!((c.num_rows(), c.num_entries()), (3, 5));
        let g = Graph::from_shared_rows(SharedRows {
            num_tbs: 4,
            row_of: vec![0, 0, 1, 2],
            chunks: vec![c],
            num_edges: 3,
            max_weight: 4,
        });
        let want = Graph::from_edges(4, &[(0, 1, 4), (0, 2, 1), (1, 2, 1)]).unwrap();
        assert_eq!(g, want);
        assert_eq!(
            g.edges().collect::<Vec<_>>(),
            want.edges().collect::<Vec<_>>()
        );
        assert_eq!(g.full_row(1), [(&[0][..], &[4][..]), (&[2][..], &[1][..])]);
        assert_eq!(g.total_weight(), 6);
    }

    #[test]
    fn broken_shared_rows_are_named() {
        let mut c = RowChunk::with_rows(1);
        let (ns, ws) = c.open_row();
        ns.extend([1]);
        ws.extend([2]);
        c.end_row();
        // TB 0 sees TB 1, but TB 1's row (the same shared row, without 1) is empty.
        let chunks = vec![c];
        let g = Graph {
            num_tbs: 2,
            tbs: locate(&chunks, &[0, 0]),
            chunks,
            num_edges: 1,
            max_weight: 2,
        };
        let why = g.invariant_violation().unwrap_or_default();
        assert!(why.contains("not in TB 1's row"), "{why}");
    }
}
