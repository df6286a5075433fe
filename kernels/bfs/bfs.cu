// bfs -- one level of Rodinia-style breadth-first search over a CSR graph, as two kernels.
// Mirrors: PAVER Table 2 "BFS" (Rodinia bfs Kernel / Kernel2). Data-dependent.
//
// Entry bfs_expand(row_ptr, col_idx, frontier, updating, visited, cost, n):
//   0 row_ptr  : const int*, n+1 CSR row offsets
//   1 col_idx  : const int*, nnz neighbour ids (0 <= id < n)
//   2 frontier : unsigned char*, n (read; cleared for expanded nodes)
//   3 updating : unsigned char*, n (set for newly reached nodes)
//   4 visited  : const unsigned char*, n
//   5 cost     : int*, n
//   6 n        : int, number of nodes
//   tid = blockIdx.x * blockDim.x + threadIdx.x; guard tid < n
//   load frontier[tid]; if set: store frontier[tid]=0, load row_ptr[tid], row_ptr[tid+1],
//   for e in [row_ptr[tid], row_ptr[tid+1]): id = col_idx[e]; load visited[id];
//   if !visited[id]: load cost[tid], store cost[id], updating[id].
//   DATA-DEPENDENT: col_idx[e] (range from row_ptr), visited/cost/updating[id] (id from col_idx).
//
// Entry bfs_update(frontier, updating, visited, over, n):
//   0 frontier : unsigned char*, n;  1 updating : unsigned char*, n
//   2 visited  : unsigned char*, n;  3 over : int*, 1 element;  4 n : int
//   tid as above; if updating[tid]: frontier[tid]=1, visited[tid]=1, *over=1, updating[tid]=0.
//   Data-dependent loads: none (stores are predicated on loaded data).
//
// Mapping (both): 1D grid, 1D block (e.g. 256).

extern "C" __global__ void bfs_expand(const int* row_ptr, const int* col_idx, unsigned char* frontier,
                                      unsigned char* updating, const unsigned char* visited, int* cost, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n && frontier[tid]) {
        frontier[tid] = 0;
        int begin = row_ptr[tid];
        int end = row_ptr[tid + 1];
        for (int e = begin; e < end; ++e) {
            int id = col_idx[e];
            if (!visited[id]) {
                cost[id] = cost[tid] + 1;
                updating[id] = 1;
            }
        }
    }
}

extern "C" __global__ void bfs_update(unsigned char* frontier, unsigned char* updating,
                                      unsigned char* visited, int* over, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n && updating[tid]) {
        frontier[tid] = 1;
        visited[tid] = 1;
        *over = 1;
        updating[tid] = 0;
    }
}
