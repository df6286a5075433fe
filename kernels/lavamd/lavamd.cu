// lavamd -- Rodinia 3.1 lavaMD (kernel_gpu_cuda): particle potential and relocation from
// the forces between particles in a 3D space cut into boxes of NUMBER_PAR_PER_BOX particles;
// each particle interacts with every particle of its home box and its (up to 26) neighbour
// boxes. Pattern: by-value struct parameters (par_str, dim_str), an array of structs read
// for data-dependent addresses, shared-memory staging.
//
// Parameters (as Rodinia's host code launches it: kernel_gpu_cuda_wrapper):
//   0 d_par_gpu : par_str by value (8 bytes): offset 0: double alpha. Used in floating-point
//                 arithmetic only (a2 = 2*alpha*alpha): no address, guard or loop bound
//                 depends on it, so the launch files leave it without a value (static
//                 analysis only; the interpreter and simulator need it: 0.5, main.c).
//   1 d_dim_gpu : dim_str by value (56 bytes): offset 0: int cur_arg, 4: int arch_arg,
//                 8: int cores_arg, 12: int boxes1d_arg, 16: long number_boxes
//                 (= boxes1d^3), 24: long box_mem, 32: long space_elem
//                 (= number_boxes * NUMBER_PAR_PER_BOX), 40: long space_mem, 48: long
//                 space_mem2. The kernel reads number_boxes only.
//   2 d_box_gpu : box_str[number_boxes] (656 bytes each): 0: int x, y, z, number;
//                 16: long offset (first particle, number * NUMBER_PAR_PER_BOX); 24: int nn
//                 (neighbours); 32: nei_str nei[26] (24 bytes each: int x, y, z, number;
//                 long offset). Written by make_boxes.py as the host code builds it.
//   3 d_rv_gpu  : FOUR_VECTOR[space_elem] (v, x, y, z doubles) particle positions
//   4 d_qv_gpu  : double[space_elem] particle charges
//   5 d_fv_gpu  : FOUR_VECTOR[space_elem] forces (read-modify-write)
//
// Mapping: 1D grid of number_boxes TBs (one home box each), 1D block of NUMBER_THREADS =
//   128 threads; thread tx handles particles wtx = tx, tx + 128, ... < 100.
//   home:  first_i = box[bx].offset; rA_shared[wtx] = rv[first_i + wtx].
//   for k in 0 .. 1 + box[bx].nn: pointer = k == 0 ? bx : box[bx].nei[k-1].number;
//          first_j = box[pointer].offset; rB_shared[wtx] = rv[first_j + wtx];
//          qB_shared[wtx] = qv[first_j + wtx];
//          for j in 0 .. 100: fv[first_i + wtx].{v,x,y,z} += f(rA_shared[wtx], rB_shared[j],
//          qB_shared[j]).
// Data-dependent loads: first_i, the neighbour count and numbers come from box[]; every
//   rv/qv/fv address is offset by them.

#define NUMBER_PAR_PER_BOX 100
#define NUMBER_THREADS 128

#define fp double

#define DOT(A, B) ((A.x) * (B.x) + (A.y) * (B.y) + (A.z) * (B.z))

typedef struct {
    fp x, y, z;
} THREE_VECTOR;

typedef struct {
    fp v, x, y, z;
} FOUR_VECTOR;

typedef struct nei_str {
    // neighbour box
    int x, y, z;
    int number;
    long offset;
} nei_str;

typedef struct box_str {
    // home box
    int x, y, z;
    int number;
    long offset;
    // neighbour boxes
    int nn;
    nei_str nei[26];
} box_str;

typedef struct par_str {
    fp alpha;
} par_str;

typedef struct dim_str {
    // input arguments
    int cur_arg;
    int arch_arg;
    int cores_arg;
    int boxes1d_arg;
    // system memory
    long number_boxes;
    long box_mem;
    long space_elem;
    long space_mem;
    long space_mem2;
} dim_str;

extern "C" __global__ void kernel_gpu_cuda(par_str d_par_gpu, dim_str d_dim_gpu, box_str* d_box_gpu,
                                           FOUR_VECTOR* d_rv_gpu, fp* d_qv_gpu,
                                           FOUR_VECTOR* d_fv_gpu)
{
    int bx = blockIdx.x;  // home box
    int tx = threadIdx.x;
    int wtx = tx;

    if (bx < d_dim_gpu.number_boxes) {
        // parameters
        fp a2 = 2.0 * d_par_gpu.alpha * d_par_gpu.alpha;

        // home box
        int first_i;
        FOUR_VECTOR* rA;
        FOUR_VECTOR* fA;
        __shared__ FOUR_VECTOR rA_shared[100];

        // neighbour box
        int pointer;
        int k = 0;
        int first_j;
        FOUR_VECTOR* rB;
        fp* qB;
        int j = 0;
        __shared__ FOUR_VECTOR rB_shared[100];
        __shared__ double qB_shared[100];

        // common
        fp r2;
        fp u2;
        fp vij;
        fp fs;
        fp fxij;
        fp fyij;
        fp fzij;
        THREE_VECTOR d;

        // home box: its particles into shared memory
        first_i = d_box_gpu[bx].offset;
        rA = &d_rv_gpu[first_i];
        fA = &d_fv_gpu[first_i];
        while (wtx < NUMBER_PAR_PER_BOX) {
            rA_shared[wtx] = rA[wtx];
            wtx = wtx + NUMBER_THREADS;
        }
        wtx = tx;
        __syncthreads();

        // the home box and each neighbour box
        for (k = 0; k < (1 + d_box_gpu[bx].nn); k++) {
            if (k == 0) {
                pointer = bx;  // the home box
            } else {
                pointer = d_box_gpu[bx].nei[k - 1].number;  // a neighbour box
            }
            first_j = d_box_gpu[pointer].offset;
            rB = &d_rv_gpu[first_j];
            qB = &d_qv_gpu[first_j];
            while (wtx < NUMBER_PAR_PER_BOX) {
                rB_shared[wtx] = rB[wtx];
                qB_shared[wtx] = qB[wtx];
                wtx = wtx + NUMBER_THREADS;
            }
            wtx = tx;
            __syncthreads();

            // every home particle against every particle of the box
            while (wtx < NUMBER_PAR_PER_BOX) {
                for (j = 0; j < NUMBER_PAR_PER_BOX; j++) {
                    r2 = (fp)rA_shared[wtx].v + (fp)rB_shared[j].v - DOT((fp)rA_shared[wtx], (fp)rB_shared[j]);
                    u2 = a2 * r2;
                    vij = exp(-u2);
                    fs = 2 * vij;
                    d.x = (fp)rA_shared[wtx].x - (fp)rB_shared[j].x;
                    fxij = fs * d.x;
                    d.y = (fp)rA_shared[wtx].y - (fp)rB_shared[j].y;
                    fyij = fs * d.y;
                    d.z = (fp)rA_shared[wtx].z - (fp)rB_shared[j].z;
                    fzij = fs * d.z;
                    fA[wtx].v += (double)((fp)qB_shared[j] * vij);
                    fA[wtx].x += (double)((fp)qB_shared[j] * fxij);
                    fA[wtx].y += (double)((fp)qB_shared[j] * fyij);
                    fA[wtx].z += (double)((fp)qB_shared[j] * fzij);
                }
                wtx = wtx + NUMBER_THREADS;
            }
            wtx = tx;
            __syncthreads();
        }
    }
}
