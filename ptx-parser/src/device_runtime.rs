//! Calls into the CUDA device runtime: kernels that launch kernels (dynamic parallelism).
//!
//! With `-rdc=true`, nvcc turns `child<<<grid, block, shmem, stream>>>(args)` in device code
//! into two calls to external functions of the device runtime library (`cudadevrt`, linked
//! after `ptxas`), each an ordinary PTX call sequence (PTX ISA 9.7.12.3, "call"):
//!
//! ```text
//! mov.u64 %rd10, child;                                  // the child kernel's address
//! call.uni (retval0), __cudaCDP2GetParameterBufferV2, (param0, param1, param2, param3);
//!         // (kernel, dim3 grid as .b8[12], dim3 block as .b8[12], dynamic shared bytes)
//! st.u64 [%rd2], %rd7; st.u32 [%rd2+16], %r9; ...        // arguments, at the offsets of the
//!                                                        // child's own .param list
//! call.uni (retval0), __cudaCDP2LaunchDeviceV2, (param0, param1);   // (buffer, stream)
//! ```
//!
//! CUDA 12 and 13 emit the CDP2 entry points (`__cudaCDP2*`); CUDA 11 and earlier (CDP1)
//! called the same ABI `cudaGetParameterBufferV2` / `cudaLaunchDeviceV2` and also had
//! `cudaDeviceSynchronize`, with which a parent waited for its children (removed from device
//! code in CUDA 12: nvcc 13 rejects it at compile time).
//!
//! These declarations have no body in the PTX, so [`crate::calls`] never inlines them; this
//! module names them as a [`DeviceRuntimeFn`] so that consumers (the interpreter, the static
//! analysis) match on an enum rather than on strings.

use crate::ir::{Inst, Module, Operand, Symbol};
use crate::opcode::Opcode;

/// A function of the CUDA device runtime that a PTX `call` can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceRuntimeFn {
    /// `cudaGetParameterBufferV2(kernel, grid, block, shmem) -> void*`: a buffer for the
    /// arguments of one launch, laid out as the kernel's `.param` list.
    GetParameterBuffer,
    /// `cudaLaunchDeviceV2(buffer, stream) -> cudaError_t`: launches what the buffer describes.
    LaunchDevice,
    /// `cudaStreamCreateWithFlags(&stream, flags) -> cudaError_t`.
    StreamCreateWithFlags,
    /// `cudaStreamDestroy(stream) -> cudaError_t`.
    StreamDestroy,
    /// `cudaGetDevice(&device) -> cudaError_t`.
    GetDevice,
    /// `cudaGetLastError() -> cudaError_t`.
    GetLastError,
    /// `cudaPeekAtLastError() -> cudaError_t`.
    PeekAtLastError,
    /// CDP1's `cudaDeviceSynchronize()`: a parent waiting for its children. Recognised so
    /// that a kernel using it is refused with a message naming it (CDP2 has no equivalent).
    DeviceSynchronize,
}

impl DeviceRuntimeFn {
    /// The runtime function a PTX function name declares, CDP2 (`__cudaCDP2GetDevice`) or
    /// CDP1 (`cudaGetDevice`) spelling.
    pub fn of_name(name: &str) -> Option<DeviceRuntimeFn> {
        let base = name.strip_prefix("__cudaCDP2").unwrap_or(name);
        let base = base.strip_prefix("cuda").unwrap_or(base);
        Some(match base {
            "GetParameterBufferV2" => DeviceRuntimeFn::GetParameterBuffer,
            "LaunchDeviceV2" => DeviceRuntimeFn::LaunchDevice,
            "StreamCreateWithFlags" => DeviceRuntimeFn::StreamCreateWithFlags,
            "StreamDestroy" => DeviceRuntimeFn::StreamDestroy,
            "GetDevice" => DeviceRuntimeFn::GetDevice,
            "GetLastError" => DeviceRuntimeFn::GetLastError,
            "PeekAtLastError" => DeviceRuntimeFn::PeekAtLastError,
            "DeviceSynchronize" => DeviceRuntimeFn::DeviceSynchronize,
            _ => return None,
        })
        // A bare `GetDevice` (neither prefix) is not the runtime's.
        .filter(|_| base.len() < name.len())
    }

    /// The CUDA API name (`cudaLaunchDeviceV2`).
    pub fn api_name(self) -> &'static str {
        match self {
            DeviceRuntimeFn::GetParameterBuffer => "cudaGetParameterBufferV2",
            DeviceRuntimeFn::LaunchDevice => "cudaLaunchDeviceV2",
            DeviceRuntimeFn::StreamCreateWithFlags => "cudaStreamCreateWithFlags",
            DeviceRuntimeFn::StreamDestroy => "cudaStreamDestroy",
            DeviceRuntimeFn::GetDevice => "cudaGetDevice",
            DeviceRuntimeFn::GetLastError => "cudaGetLastError",
            DeviceRuntimeFn::PeekAtLastError => "cudaPeekAtLastError",
            DeviceRuntimeFn::DeviceSynchronize => "cudaDeviceSynchronize",
        }
    }
}

/// The device-runtime function that `inst` calls, if it is a direct `call` to a body-less
/// function named like one.
pub fn runtime_call(m: &Module, inst: &Inst) -> Option<DeviceRuntimeFn> {
    if inst.op != Opcode::Call {
        return None;
    }
    inst.operands.iter().find_map(|o| match o {
        Operand::Symbol(Symbol::Function(i)) => m
            .functions
            .get(*i as usize)
            .filter(|g| !g.has_body)
            .and_then(|g| DeviceRuntimeFn::of_name(&g.name)),
        _ => None,
    })
}

/// Whether kernel `f` launches kernels (calls `cudaLaunchDeviceV2`).
pub fn launches_kernels(m: &Module, f: &crate::ir::Function) -> bool {
    f.insts
        .iter()
        .any(|i| runtime_call(m, i) == Some(DeviceRuntimeFn::LaunchDevice))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_functions() {
        assert_eq!(
            DeviceRuntimeFn::of_name("__cudaCDP2LaunchDeviceV2"),
            Some(DeviceRuntimeFn::LaunchDevice)
        );
        assert_eq!(
            DeviceRuntimeFn::of_name("cudaDeviceSynchronize"),
            Some(DeviceRuntimeFn::DeviceSynchronize)
        );
        assert_eq!(DeviceRuntimeFn::of_name("GetDevice"), None);
        assert_eq!(DeviceRuntimeFn::of_name("vprintf"), None);
    }

    #[test]
    fn nvcc13_launches_parse_as_runtime_calls() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../kernels/dp/dp_bfs/dp_bfs.nvcc13.sm_90.ptx"
        );
        let m = crate::parse_file(std::path::Path::new(path)).expect("parses");
        let parent = m.kernel("dp_bfs_level").expect("parent");
        let calls: Vec<_> = parent
            .insts
            .iter()
            .filter_map(|i| runtime_call(&m, i))
            .collect();
        assert_eq!(
            calls,
            [
                DeviceRuntimeFn::GetParameterBuffer,
                DeviceRuntimeFn::LaunchDevice
            ]
        );
        assert!(launches_kernels(&m, parent));
        assert!(!launches_kernels(
            &m,
            m.kernel("dp_bfs_child").expect("child")
        ));
        // The kernel's address is taken as an operand of `mov`.
        assert!(parent.insts.iter().any(|i| i.op == Opcode::Mov
            && matches!(
                i.operands.get(1),
                Some(Operand::Symbol(Symbol::Function(_)))
            )));
    }
}
