// storegpu_hash -- StoreGPU-like content hashing, two entries.
// Mirrors: PAVER Table 2 "SGPU" (StoreGPU: fixed-block and sliding-window hashing).
//
// Entry storegpu_chunk_hash(data, digests, num_chunks, chunk_words): one thread per chunk,
//   a 32-bit Murmur3-style hash of the chunk's words.
//   0 data        : const unsigned int*, num_chunks * chunk_words words
//   1 digests     : unsigned int*, num_chunks (output)
//   2 num_chunks  : int
//   3 chunk_words : int
//   c = blockIdx.x * blockDim.x + threadIdx.x; guard c < num_chunks
//   loads data[c*chunk_words + w] for w in [0, chunk_words); store digests[c]
//
// Entry storegpu_sliding_hash(bytes, hashes, num_windows, window): one thread per byte
//   offset, a multiplicative rolling hash of bytes[i .. i+window) (overlapping windows).
//   0 bytes       : const unsigned char*, num_windows + window - 1 bytes
//   1 hashes      : unsigned int*, num_windows (output)
//   2 num_windows : int
//   3 window      : int
//   i = blockIdx.x * blockDim.x + threadIdx.x; guard i < num_windows
//   loads bytes[i + k] for k in [0, window); store hashes[i]
//
// Mapping (both): 1D grid, 1D block. Unsigned arithmetic for the hashing.
// Data-dependent loads: none.

__device__ __forceinline__ unsigned int sg_rotl(unsigned int x, int r)
{
    return (x << r) | (x >> (32 - r));
}

extern "C" __global__ void storegpu_chunk_hash(const unsigned int* data, unsigned int* digests,
                                               int num_chunks, int chunk_words)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < num_chunks) {
        const unsigned int* p = data + c * chunk_words;
        unsigned int h = 0x9747b28cu ^ (unsigned int)c;
        for (int w = 0; w < chunk_words; ++w) {
            unsigned int k = p[w];
            k *= 0xcc9e2d51u;
            k = sg_rotl(k, 15);
            k *= 0x1b873593u;
            h ^= k;
            h = sg_rotl(h, 13);
            h = h * 5u + 0xe6546b64u;
        }
        h ^= (unsigned int)chunk_words * 4u;
        h ^= h >> 16;
        h *= 0x85ebca6bu;
        h ^= h >> 13;
        h *= 0xc2b2ae35u;
        h ^= h >> 16;
        digests[c] = h;
    }
}

extern "C" __global__ void storegpu_sliding_hash(const unsigned char* bytes, unsigned int* hashes,
                                                 int num_windows, int window)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < num_windows) {
        unsigned int h = 2166136261u;
        for (int k = 0; k < window; ++k) {
            h = (h ^ (unsigned int)bytes[i + k]) * 16777619u;
        }
        hashes[i] = h;
    }
}
