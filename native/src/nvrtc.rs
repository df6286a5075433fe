//! NVIDIA's runtime CUDA compiler (NVRTC), loaded at run time (see the crate's overview).
