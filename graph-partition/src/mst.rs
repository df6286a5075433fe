//! Prim's maximum spanning tree order (PAVER §4.1), the building block of MST-TS and of the
//! re-ordering inside Kway-TS parts, plus Kruskal's algorithm as a slow reference.
//!
//! Determinism: Prim keeps, for each vertex outside the tree, its best connection weight to
//! the tree (its key). At each step the vertex with the **largest key** joins; equal keys go
//! to the **smallest TB id**. Vertices with no edge to the tree are never picked while a
//! connected one remains; when the tree cannot grow, a new tree starts at the **smallest
//! unvisited TB id** of the vertex set. The order in which vertices join is the MST order.

use crate::graph::Graph;

/// Result of a Prim run: the visiting order and the weight of the spanning forest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrimForest {
    /// Vertices in the order they joined the forest.
    pub order: Vec<u32>,
    /// Sum of the weights of the tree edges used.
    pub weight: u128,
}

/// Prim over the whole graph, starting at TB 0.
pub fn prim_order(g: &Graph) -> PrimForest {
    let all: Vec<u32> = (0..g.num_tbs()).collect();
    let mut ws = PrimWorkspace::new(g.num_tbs());
    ws.run(g, &all, None)
}

/// Reusable state for Prim over subsets of one graph (the Kway-TS parts).
#[derive(Debug)]
pub struct PrimWorkspace {
    key: Vec<u64>,
    pos: Vec<usize>,
    done: Vec<bool>,
    heap: Vec<u32>,
}

const NOT_IN_HEAP: usize = usize::MAX;

impl PrimWorkspace {
    /// Workspace for a graph of `n` vertices.
    pub fn new(n: u32) -> PrimWorkspace {
        PrimWorkspace {
            key: vec![0; n as usize],
            pos: vec![NOT_IN_HEAP; n as usize],
            done: vec![false; n as usize],
            heap: Vec::new(),
        }
    }

    /// Prim over the subgraph induced by `vertices` (sorted ascending). With `labels`, an
    /// edge is followed only when both ends carry the same label (the part id), and
    /// `vertices` must be exactly the members of one label; without `labels`, `vertices`
    /// must be every vertex of `g`.
    pub fn run(&mut self, g: &Graph, vertices: &[u32], labels: Option<&[u32]>) -> PrimForest {
        let mut order = Vec::with_capacity(vertices.len());
        let mut weight = 0u128;
        let mut next_start = 0usize;
        while order.len() < vertices.len() {
            // New tree at the smallest unvisited member.
            while self.done[vertices[next_start] as usize] {
                next_start += 1;
            }
            let root = vertices[next_start];
            self.key[root as usize] = 0;
            self.push(root);
            while let Some(v) = self.pop() {
                self.done[v as usize] = true;
                weight += u128::from(self.key[v as usize]);
                order.push(v);
                let lv = labels.map(|l| l[v as usize]);
                // The row's two halves as plain slices: the tightest loop over them.
                for (ns, ws) in g.full_row(v) {
                    for (&u, &w) in ns.iter().zip(ws) {
                        if self.done[u as usize] || labels.map(|l| l[u as usize]) != lv {
                            continue;
                        }
                        if self.pos[u as usize] == NOT_IN_HEAP {
                            self.key[u as usize] = w;
                            self.push(u);
                        } else if w > self.key[u as usize] {
                            self.key[u as usize] = w;
                            self.sift_up(self.pos[u as usize]);
                        }
                    }
                }
            }
        }
        for &v in vertices {
            self.done[v as usize] = false;
            self.key[v as usize] = 0;
        }
        PrimForest { order, weight }
    }

    /// True when `a` should leave the heap before `b`: larger key, then smaller id.
    fn before(&self, a: u32, b: u32) -> bool {
        let (ka, kb) = (self.key[a as usize], self.key[b as usize]);
        ka > kb || (ka == kb && a < b)
    }

    fn push(&mut self, v: u32) {
        self.heap.push(v);
        let i = self.heap.len() - 1;
        self.pos[v as usize] = i;
        self.sift_up(i);
    }

    fn pop(&mut self) -> Option<u32> {
        let top = *self.heap.first()?;
        let last = self.heap.pop()?;
        self.pos[top as usize] = NOT_IN_HEAP;
        if !self.heap.is_empty() {
            self.heap[0] = last;
            self.pos[last as usize] = 0;
            self.sift_down(0);
        }
        Some(top)
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let p = (i - 1) / 2;
            if self.before(self.heap[i], self.heap[p]) {
                self.swap(i, p);
                i = p;
            } else {
                break;
            }
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut best = i;
            if l < self.heap.len() && self.before(self.heap[l], self.heap[best]) {
                best = l;
            }
            if r < self.heap.len() && self.before(self.heap[r], self.heap[best]) {
                best = r;
            }
            if best == i {
                break;
            }
            self.swap(i, best);
            i = best;
        }
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        self.pos[self.heap[i] as usize] = i;
        self.pos[self.heap[j] as usize] = j;
    }
}

/// Weight of a maximum spanning forest by Kruskal (edges by decreasing weight, union-find).
/// Slow and obvious: the reference Prim is checked against.
pub fn kruskal_forest_weight(g: &Graph) -> u128 {
    let mut edges: Vec<(u32, u32, u64)> = g.edges().collect();
    edges.sort_by_key(|e| std::cmp::Reverse(e.2));
    let mut parent: Vec<u32> = (0..g.num_tbs()).collect();
    fn find(p: &mut [u32], mut x: u32) -> u32 {
        while p[x as usize] != x {
            p[x as usize] = p[p[x as usize] as usize];
            x = p[x as usize];
        }
        x
    }
    let mut total = 0u128;
    for (i, j, w) in edges {
        let (a, b) = (find(&mut parent, i), find(&mut parent, j));
        if a != b {
            parent[a as usize] = b;
            total += u128::from(w);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_to_smallest_id_and_components_restart_at_smallest_unvisited() {
        // 0-2 and 0-1 tie (weight 5): 1 joins first. 3 is isolated; 4-5 is a component.
        let g = Graph::from_edges(6, &[(0, 2, 5), (0, 1, 5), (4, 5, 1)]).unwrap();
        let f = prim_order(&g);
        assert_eq!(f.order, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(f.weight, 11);
    }

    #[test]
    fn heavier_edge_wins_over_id() {
        // From 0: 2 (w 9) before 1 (w 1); then 3 via 2 (w 4) before 1.
        let g = Graph::from_edges(4, &[(0, 1, 1), (0, 2, 9), (2, 3, 4)]).unwrap();
        assert_eq!(prim_order(&g).order, vec![0, 2, 3, 1]);
        assert_eq!(kruskal_forest_weight(&g), 14);
    }
}
