// lane_trips -- loops whose trip count grows along the lanes of a warp (thread t of a row runs
// t % 37 iterations), for the footprints' walk of a warp row's lanes together: lanes whose
// counts differ must each walk their own. Row r of `a` (w floats) is read by the thread
// with global index r: a[r * w + j] for j < t % 37, then a[r * w + w - 1] under t % 3 == 0.
extern "C" __global__ void lane_trips(const float* a, float* out, int w)
{
    int t = threadIdx.x;
    int row = blockIdx.x * blockDim.x + t;
    float s = 0.0f;
    for (int j = 0; j < t % 37; ++j) {
        s += a[row * w + j];
    }
    if (t % 3 == 0) {
        s += a[row * w + w - 1];
    }
    out[row] = s;
}

// lane_breaks -- a loop that threads with t % 4 == 1 leave after one iteration: its trip count
// depends on the thread only through exit conditions that read nothing but %tid (true in
// some threads, false in others), which the trip counts' dependences must keep. Thread row r
// reads a[r * n + k] for k < n, or k < 1 when t % 4 == 1.
extern "C" __global__ void lane_breaks(const float* a, float* out, int n)
{
    int t = threadIdx.x;
    int row = blockIdx.x * blockDim.x + t;
    float s = 0.0f;
    for (int k = 0; k < n; ++k) {
        s += a[row * n + k];
        if (t % 4 == 1) {
            break;
        }
    }
    out[row] = s;
}
