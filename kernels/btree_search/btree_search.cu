// btree_search -- B+tree point lookups, one thread block per query (Rodinia b+tree findK
// style). Data-dependent: every level follows a child index loaded from memory.
// Mirrors: PAVER Table 2 "B+T" (Rodinia b+tree, findK).
//
// Tree layout (built by make_tree.py; order = blockDim.x = 64 keys per node):
//   node_keys[node*order + i]  : i-th key of node (sorted ascending, unused slots INT_MAX).
//       Internal nodes: key i is the smallest key under child i (key 0 is INT_MIN).
//       Leaves: the stored keys.
//   node_child[node*order + i] : internal node -> node index of child i;
//                                leaf -> index into records of key i.
//   Node 0 is the root; all leaves are at depth `height`.
//
// Parameters:
//   0 height     : int, number of internal levels above the leaves
//   1 node_keys  : const int*, num_nodes * order
//   2 node_child : const int*, num_nodes * order
//   3 records    : const int*, num_records
//   4 queries    : const int*, one key per block
//   5 answers    : int*, one per block (written only if the key is found)
//
// Mapping: 1D grid (one block per query), 1D block of `order` threads (64).
//   key = queries[blockIdx.x]; cur = 0 (shared)
//   for lvl in [0, height):
//     load node_keys[cur*order + tid] and (tid+1 < order) node_keys[cur*order + tid + 1]
//     the thread with lo <= key < hi loads node_child[cur*order + tid] -> new cur
//   leaf: load node_keys[cur*order + tid]; on match load node_child[cur*order + tid] = rec,
//   load records[rec], store answers[blockIdx.x].
// DATA-DEPENDENT: cur (all node_keys/node_child loads after the root), records[rec].
#define BT_INT_MAX 2147483647

extern "C" __global__ void btree_find_k(int height, const int* node_keys, const int* node_child,
                                        const int* records, const int* queries, int* answers)
{
    __shared__ int cur;
    int tid = threadIdx.x;
    int order = blockDim.x;
    int key = queries[blockIdx.x];
    if (tid == 0) {
        cur = 0;
    }
    __syncthreads();
    for (int lvl = 0; lvl < height; ++lvl) {
        int base = cur * order;
        int lo = node_keys[base + tid];
        int hi = (tid + 1 < order) ? node_keys[base + tid + 1] : BT_INT_MAX;
        __syncthreads();
        if (lo <= key && key < hi) {
            cur = node_child[base + tid];
        }
        __syncthreads();
    }
    int base = cur * order;
    if (node_keys[base + tid] == key) {
        answers[blockIdx.x] = records[node_child[base + tid]];
    }
}
