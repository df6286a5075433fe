// guarded_loads -- loads whose addresses the launch determines but which run under a guard
// on loaded data or on a floating-point value (Rodinia BFS's node and cost reads under
// `if (mask[tid])`, streamcluster / particle-filter style float tests).
// Mirrors: issue 13 evidence for "static address under a data-dependent guard".
//
// Entry guarded_gather(mask, nodes, cost, weight, out, n): one thread per node.
//   0 mask   : const unsigned char*, n        (read: mask[tid], exact)
//   1 nodes  : const int*, 2n                 (read under mask[tid] != 0: nodes[2 tid], nodes[2 tid + 1])
//   2 cost   : const float*, n                (read under mask[tid] != 0: cost[tid])
//   3 weight : const float*, n + 32           (read under cost[tid] > 0.5f: weight[tid + 32])
//   4 out    : float*, n (output)
//   5 n      : int
//   tid = blockIdx.x * blockDim.x + threadIdx.x; guard tid < n.
// Mapping: 1D grid, 1D block.
// Data-dependent loads: none by address; the guards of nodes/cost (data) and weight
// (floating point) depend on loaded values.

extern "C" __global__ void guarded_gather(const unsigned char* mask, const int* nodes,
                                          const float* cost, const float* weight, float* out,
                                          int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) {
        return;
    }
    float acc = 0.0f;
    if (mask[tid]) {
        int a = nodes[2 * tid];
        int b = nodes[2 * tid + 1];
        float c = cost[tid];
        acc = (float)(a + b) * c;
        if (c > 0.5f) {
            acc += weight[tid + 32];
        }
    }
    out[tid] = acc;
}
