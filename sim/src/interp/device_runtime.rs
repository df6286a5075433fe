//! Kernels that launch kernels: the CUDA device runtime (CDP2) as the interpreter runs it.
//!
//! nvcc compiles `child<<<grid, block, shmem, stream>>>(args)` in device code into calls of
//! `cudaGetParameterBufferV2` and `cudaLaunchDeviceV2` (`ptx_parser::device_runtime`). The
//! decoder turns each such call into `Op::Runtime`; a warp executes it lane by lane, in lane
//! order ([`super::warp`]'s `runtime_ops`), against the TB's [`TbRuntime`]:
//! - `cudaGetParameterBufferV2(kernel, grid, block, shmem)` checks the configuration (the
//!   kernel is an `.entry` of the module; no zero dimension; at most 1,024 threads, 64 in z;
//!   grid y and z at most 65,535) and returns a zeroed buffer of the child's parameter-block
//!   size, in a TB-private arena seen through generic addresses at [`PARAM_BUFFER_WINDOW`];
//!   the parent fills it with ordinary stores at the offsets of the child's `.param` list;
//! - `cudaLaunchDeviceV2(buffer, stream)` records a [`ChildLaunch`] with a copy of the
//!   buffer's bytes (the arguments are captured at the launch, as on the GPU);
//! - `cudaStreamCreateWithFlags` hands out TB-scoped stream handles, `cudaStreamDestroy`
//!   retires them; `cudaGetDevice` writes 0; `cudaGetLastError` and `cudaPeekAtLastError`
//!   return `cudaSuccess`.
//!
//! A kernel's address (`mov.u64 %rd, child;`) is the handle [`FUNCTION_HANDLE`] + the
//! function's index in the module.
//!
//! # Order of execution (what CDP2 guarantees, and the one order chosen)
//! CDP2 (CUDA 12+) has no device-side `cudaDeviceSynchronize`: a parent can never wait for
//! its children, so nothing a parent thread reads may depend on a child having run. A child
//! grid sees the global-memory writes its parent made before the launch (and, after a
//! `__syncthreads()`, those of the parent's TB), runs after earlier launches into the same
//! stream, and a grid is complete only when all its children are. A tail launch
//! (`cudaStreamTailLaunch`) starts after the launching grid and all its other work have
//! completed; a fire-and-forget launch (`cudaStreamFireAndForget`) and launches into
//! distinct streams have no order among themselves.
//!
//! The runner ([`super::runner`]) picks one schedule that every such program allows, and the
//! same one on every run: a grid runs all its TBs (as a host launch does, memory model
//! included); then each child it launched, in launch order (TB id, then the order the TB
//! executed the launches: warps in round-robin order, lanes in ascending order), each child
//! completing with its own descendants before the next starts (depth first, which is what
//! same-stream order asks for and no stream forbids); then its tail launches in launch order.
//! A child that reads memory its parent grid wrote after the launch therefore sees the
//! write, where a GPU might not: such a program has a race under CUDA's rules.
//!
//! Launches nest at most [`MAX_NESTING_DEPTH`] grids below the host's launch, the hardware's
//! limit (CUDA Programming Guide, "Nesting and synchronization depth"; Tang et al. §2.1); a
//! deeper launch stops the run with an error naming the launch. A legacy (CDP1)
//! `cudaDeviceSynchronize` call stops the run when executed, naming the call and its PTX line.
//!
//! Observers ([`super::observer`]) see the host-launched grid only, unless they ask for the
//! child grids too (`MemObserver::wants_device_grids`: TB ids would collide with the
//! parent's otherwise), and are then told which grid runs, who launched it and where;
//! [`super::RunStats`] counts the child grids so that a caller can say what it did not
//! observe.

use ptx_parser::DeviceRuntimeFn;

use crate::error::Loc;

/// Generic address of byte 0 of a TB's parameter-buffer arena (below the shared window).
pub const PARAM_BUFFER_WINDOW: u64 = 0xFD00_0000_0000_0000;
/// A kernel's address as a value: this plus its index in the module's functions.
pub const FUNCTION_HANDLE: u64 = 0xFC00_0000_0000_0000;
/// Deepest nesting of device-side launches below the host's launch.
pub const MAX_NESTING_DEPTH: u32 = 24;
/// `cudaStreamTailLaunch` as a stream handle (CUDA's `(cudaStream_t)0x3`).
pub const STREAM_TAIL_LAUNCH: u64 = 3;
/// `cudaStreamFireAndForget` as a stream handle (CUDA's `(cudaStream_t)0x4`).
pub const STREAM_FIRE_AND_FORGET: u64 = 4;
/// First handle `cudaStreamCreateWithFlags` hands out (any value but 0, 3 and 4 would do).
const STREAM_CREATED0: u64 = 0x5354_0000;
/// Alignment of a parameter buffer (the device runtime's, 64 bytes).
const BUFFER_ALIGN: usize = 64;
/// `cudaErrorInvalidResourceHandle`, returned for an unknown stream.
pub const CUDA_ERROR_INVALID_RESOURCE_HANDLE: u64 = 400;

/// One call of the device runtime, decoded: the function and where the call's `.param`
/// arguments and return value live in the calling thread's local memory.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RuntimeCall {
    pub f: DeviceRuntimeFn,
    /// Local-memory offset of each argument.
    pub args: Vec<u64>,
    /// Local-memory offset of the return value.
    pub ret: Option<u64>,
}

/// The stream a child grid was launched into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// The NULL stream (0).
    Null,
    /// A stream the launching TB created.
    Created(u64),
    /// `cudaStreamTailLaunch`: after the launching grid and all its other work.
    TailLaunch,
    /// `cudaStreamFireAndForget`.
    FireAndForget,
}

/// A grid launched from the device.
#[derive(Clone, Debug)]
pub struct ChildLaunch {
    /// The child kernel's index in the module's functions.
    pub kernel: u32,
    /// Grid shape.
    pub grid: [u32; 3],
    /// Block shape.
    pub block: [u32; 3],
    /// Dynamic shared memory, bytes.
    pub dynamic_shared: u64,
    /// The parameter block, as the parent filled it.
    pub params: Vec<u8>,
    /// The stream.
    pub stream: Stream,
    /// Where the parent launched it (`cudaLaunchDeviceV2`'s call).
    pub loc: Box<Loc>,
    /// Linear id of the launching TB in its grid.
    pub tb: u64,
    /// Warp of the launching thread in its TB.
    pub warp: u32,
}

/// A buffer handed out by `cudaGetParameterBufferV2`.
#[derive(Clone, Debug)]
pub(crate) struct ParamBuffer {
    pub offset: usize,
    pub size: usize,
    pub kernel: u32,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared: u64,
    pub launched: bool,
}

/// The device-runtime state of one TB: its parameter buffers, streams and launches.
#[derive(Clone, Debug, Default)]
pub struct TbRuntime {
    /// Bytes of every parameter buffer of the TB, at [`PARAM_BUFFER_WINDOW`].
    pub(crate) arena: Vec<u8>,
    pub(crate) buffers: Vec<ParamBuffer>,
    /// Streams created and not destroyed.
    pub(crate) streams: Vec<u64>,
    pub(crate) next_stream: u64,
    /// Launches, in execution order.
    pub(crate) launches: Vec<ChildLaunch>,
}

impl TbRuntime {
    /// A zeroed buffer of `size` bytes; its generic address.
    pub(crate) fn alloc(&mut self, mut b: ParamBuffer) -> u64 {
        let offset = self.arena.len().div_ceil(BUFFER_ALIGN) * BUFFER_ALIGN;
        self.arena.resize(offset + b.size, 0);
        b.offset = offset;
        self.buffers.push(b);
        PARAM_BUFFER_WINDOW + offset as u64
    }

    /// The buffer at generic address `addr` that has not been launched yet.
    pub(crate) fn take_buffer(&mut self, addr: u64) -> Option<&mut ParamBuffer> {
        let off = usize::try_from(addr.checked_sub(PARAM_BUFFER_WINDOW)?).ok()?;
        self.buffers
            .iter_mut()
            .find(|b| b.offset == off && !b.launched)
    }

    /// A new stream handle.
    pub(crate) fn create_stream(&mut self) -> u64 {
        let h = STREAM_CREATED0 + self.next_stream;
        self.next_stream += 1;
        self.streams.push(h);
        h
    }

    /// The stream a handle names (`None`: not a stream of this TB).
    pub(crate) fn stream(&self, h: u64) -> Option<Stream> {
        match h {
            0 => Some(Stream::Null),
            STREAM_TAIL_LAUNCH => Some(Stream::TailLaunch),
            STREAM_FIRE_AND_FORGET => Some(Stream::FireAndForget),
            h if self.streams.contains(&h) => Some(Stream::Created(h)),
            _ => None,
        }
    }

    /// Takes the TB's launches.
    pub fn take_launches(&mut self) -> Vec<ChildLaunch> {
        std::mem::take(&mut self.launches)
    }
}

/// Why a launch configuration is invalid (`None`: valid), as `cudaLaunchDevice` would
/// refuse it (`cudaErrorInvalidConfiguration`).
pub(crate) fn bad_config(grid: [u32; 3], block: [u32; 3]) -> Option<String> {
    let threads = block.iter().map(|&v| u64::from(v)).product::<u64>();
    if grid.contains(&0) || block.contains(&0) {
        Some(format!("empty grid {grid:?} or block {block:?}"))
    } else if threads > 1024 || block[0] > 1024 || block[1] > 1024 || block[2] > 64 {
        Some(format!(
            "block {block:?} ({threads} threads) exceeds 1024 threads (x, y <= 1024, z <= 64)"
        ))
    } else if grid[0] > i32::MAX as u32 || grid[1] > 65535 || grid[2] > 65535 {
        Some(format!(
            "grid {grid:?} exceeds 2^31-1 x 65535 x 65535 blocks"
        ))
    } else {
        None
    }
}
