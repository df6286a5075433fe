// backprop -- forward pass of one fully connected layer (Rodinia backprop
// bpnn_layerforward): each 16x16 block multiplies 16 inputs by a 16x16 weight tile in
// shared memory and reduces over the 16 inputs with a shared-memory tree.
// Mirrors: PAVER Table 2 "BP" (Rodinia backprop).
//
// Parameters:
//   0 input   : const float*, in_n input activations
//   1 weights : const float*, in_n x hid_n, row-major
//   2 partial : float*, (in_n/16) x hid_n partial sums (output)
//   3 in_n    : int (multiple of 16)
//   4 hid_n   : int (multiple of 16)
//
// Mapping: 2D grid (hid_n/16, in_n/16), block MUST be 16x16 (BP_B).
//   row = blockIdx.y*16 + threadIdx.y (input index), col = blockIdx.x*16 + threadIdx.x
//   threadIdx.x == 0 loads input[row]; all load weights[row*hid_n + col]
//   after the reduction threadIdx.y == 0 stores partial[blockIdx.y*hid_n + col]
// Data-dependent loads: none.
#define BP_B 16

extern "C" __global__ void backprop_layerforward(const float* input, const float* weights,
                                                 float* partial, int in_n, int hid_n)
{
    __shared__ float in_s[BP_B];
    __shared__ float w_s[BP_B][BP_B];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * BP_B + ty;
    int col = blockIdx.x * BP_B + tx;
    if (tx == 0) {
        in_s[ty] = input[row];
    }
    __syncthreads();
    w_s[ty][tx] = weights[row * hid_n + col] * in_s[ty];
    __syncthreads();
    for (int s = 1; s < BP_B; s *= 2) {
        if (ty % (2 * s) == 0) {
            w_s[ty][tx] += w_s[ty + s][tx];
        }
        __syncthreads();
    }
    if (ty == 0) {
        partial[blockIdx.y * hid_n + col] = w_s[0][tx];
    }
}
