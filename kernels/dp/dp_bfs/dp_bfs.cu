// dp_bfs: one level of a breadth-first search with dynamic parallelism (the Type I BFS of
// Tang et al., POMACS 2018, Fig. 1(b); LASER's BFS benchmarks).
//
// dp_bfs_level(row_ptr, col_idx, frontier, next, cost, n, level, threshold), 1D grid of 1D
// blocks, one thread per node u = blockIdx.x * blockDim.x + threadIdx.x (u < n):
//   - skips u unless frontier[u] (u8) is set;
//   - a node with at most `threshold` neighbours visits them itself;
//   - a node with more launches a child grid dp_bfs_child over its neighbour list
//     row_ptr[u] .. row_ptr[u+1] (64 threads per block, enough blocks for the degree).
// Visiting neighbour v = col_idx[j]: if cost[v] < 0 (unvisited), cost[v] = level + 1 and
// next[v] = 1. Every writer writes the same values, so the result does not depend on the order
// of threads or grids. Data-dependent: col_idx[j] (CSR neighbours), cost[v], and the child's
// launch (grid size, start) come from row_ptr.
//
// dp_bfs_child(col_idx, next, cost, begin, degree, level): thread j < degree visits
// col_idx[begin + j] the same way.

extern "C" __global__ void dp_bfs_child(const int *col_idx, unsigned char *next, int *cost,
                                        int begin, int degree, int level) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < degree) {
        int v = col_idx[begin + j];
        if (cost[v] < 0) {
            cost[v] = level + 1;
            next[v] = 1;
        }
    }
}

extern "C" __global__ void dp_bfs_level(const int *row_ptr, const int *col_idx,
                                        const unsigned char *frontier, unsigned char *next,
                                        int *cost, int n, int level, int threshold) {
    int u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= n || !frontier[u]) return;
    int begin = row_ptr[u];
    int degree = row_ptr[u + 1] - begin;
    if (degree > threshold) {
        dp_bfs_child<<<(degree + 63) / 64, 64>>>(col_idx, next, cost, begin, degree, level);
    } else {
        for (int j = begin; j < begin + degree; j++) {
            int v = col_idx[j];
            if (cost[v] < 0) {
                cost[v] = level + 1;
                next[v] = 1;
            }
        }
    }
}
