//! Calls of the CUDA device runtime executed by a warp (`Op::Runtime`): each active lane in
//! ascending order makes its own call, reading the call's `.param` arguments from its local
//! memory and writing the return value there (`interp::device_runtime` has the semantics).

use ptx_parser::DeviceRuntimeFn;

use super::memory_ops::{read_bytes, write_bytes};
use super::{TbCtx, Warp};
use crate::error::SimError;
use crate::interp::device_runtime::*;
use crate::interp::layout::{LOCAL_WINDOW, SHARED_WINDOW};
use crate::interp::memory::GlobalMemory;

impl Warp {
    /// Runs `call` for every lane of `exec`, in lane order.
    pub(super) fn runtime_call<M: GlobalMemory>(
        &mut self,
        tb: &mut TbCtx<'_>,
        mem: &mut M,
        pc: u32,
        exec: u32,
        call: &RuntimeCall,
    ) -> Result<(), SimError> {
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let v = self.runtime_lane(tb, mem, pc, l, call)?;
            if let Some(off) = call.ret {
                let size = if call.f == DeviceRuntimeFn::GetParameterBuffer {
                    8
                } else {
                    4
                };
                let ok = self
                    .local_slot(l, off, size)
                    .is_some_and(|i| write_bytes(&mut self.local, i as u64, size, v));
                if !ok {
                    return Err(self.runtime_err(tb, pc, l, "the return value has no room"));
                }
            }
        }
        Ok(())
    }

    fn runtime_err(
        &self,
        tb: &TbCtx<'_>,
        pc: u32,
        lane: usize,
        why: impl Into<String>,
    ) -> SimError {
        SimError::DeviceLaunch {
            why: why.into(),
            loc: tb.loc(self.id, lane, pc),
        }
    }

    /// Bytes `at..at + size` of argument `k` of `call`, lane `l`.
    #[allow(clippy::too_many_arguments)]
    fn runtime_arg(
        &self,
        tb: &TbCtx<'_>,
        pc: u32,
        l: usize,
        call: &RuntimeCall,
        k: usize,
        at: u64,
        size: u32,
    ) -> Result<u64, SimError> {
        call.args
            .get(k)
            .and_then(|&off| self.local_slot(l, off + at, size))
            .and_then(|i| read_bytes(&self.local, i as u64, size))
            .ok_or_else(|| {
                self.runtime_err(
                    tb,
                    pc,
                    l,
                    format!("{}: argument {k} cannot be read", call.f.api_name()),
                )
            })
    }

    /// Stores `size` bytes of `v` at generic address `addr` (a result the runtime returns
    /// through a pointer: a stream handle, a device number).
    #[allow(clippy::too_many_arguments)]
    fn runtime_store<M: GlobalMemory>(
        &mut self,
        tb: &mut TbCtx<'_>,
        mem: &mut M,
        pc: u32,
        l: usize,
        addr: u64,
        size: u32,
        v: u64,
    ) -> Result<(), SimError> {
        let ok = if addr >= LOCAL_WINDOW {
            let off = (addr - LOCAL_WINDOW) & u64::from(u32::MAX);
            self.local_slot(l, off, size)
                .is_some_and(|i| write_bytes(&mut self.local, i as u64, size, v))
        } else if addr >= SHARED_WINDOW {
            write_bytes(&mut tb.shared, addr - SHARED_WINDOW, size, v)
        } else if addr >= PARAM_BUFFER_WINDOW {
            write_bytes(&mut tb.runtime.arena, addr - PARAM_BUFFER_WINDOW, size, v)
        } else {
            mem.store(addr, size, v).is_ok()
        };
        if ok {
            Ok(())
        } else {
            Err(self.runtime_err(
                tb,
                pc,
                l,
                format!("cannot store the runtime's {size}-byte result at address {addr:#x}"),
            ))
        }
    }

    /// One lane's call; its return value.
    fn runtime_lane<M: GlobalMemory>(
        &mut self,
        tb: &mut TbCtx<'_>,
        mem: &mut M,
        pc: u32,
        l: usize,
        call: &RuntimeCall,
    ) -> Result<u64, SimError> {
        let arg =
            |w: &Self, k: usize, at: u64, size: u32| w.runtime_arg(tb, pc, l, call, k, at, size);
        match call.f {
            DeviceRuntimeFn::GetParameterBuffer => {
                let func = arg(self, 0, 0, 8)?;
                let dim = |w: &Self, k: usize| -> Result<[u32; 3], SimError> {
                    Ok([
                        arg(w, k, 0, 4)? as u32,
                        arg(w, k, 4, 4)? as u32,
                        arg(w, k, 8, 4)? as u32,
                    ])
                };
                let grid = dim(self, 1)?;
                let block = dim(self, 2)?;
                let dynamic_shared = arg(self, 3, 0, 4)?;
                let kernel = func
                    .checked_sub(FUNCTION_HANDLE)
                    .and_then(|i| u32::try_from(i).ok());
                let size = kernel.and_then(|k| tb.prog.child_param_bytes(k));
                let (Some(kernel), Some(size)) = (kernel, size) else {
                    return Err(self.runtime_err(
                        tb,
                        pc,
                        l,
                        format!(
                            "cudaGetParameterBufferV2: {func:#x} is not the address of a kernel \
                             (.entry with a body) of the module"
                        ),
                    ));
                };
                if let Some(why) = bad_config(grid, block) {
                    let name = tb.prog.child_name(kernel);
                    return Err(self.runtime_err(
                        tb,
                        pc,
                        l,
                        format!("invalid configuration for child kernel `{name}`: {why}"),
                    ));
                }
                Ok(tb.runtime.alloc(ParamBuffer {
                    offset: 0,
                    size: size as usize,
                    kernel,
                    grid,
                    block,
                    dynamic_shared,
                    launched: false,
                }))
            }
            DeviceRuntimeFn::LaunchDevice => {
                let buf = arg(self, 0, 0, 8)?;
                let handle = arg(self, 1, 0, 8)?;
                let Some(stream) = tb.runtime.stream(handle) else {
                    return Err(self.runtime_err(
                        tb,
                        pc,
                        l,
                        format!(
                            "cudaLaunchDeviceV2: stream {handle:#x} is not the NULL stream, \
                             cudaStreamTailLaunch, cudaStreamFireAndForget or a stream this TB \
                             created and has not destroyed"
                        ),
                    ));
                };
                let loc = tb.loc(self.id, l, pc);
                let rt = &mut tb.runtime;
                let Some(b) = rt.take_buffer(buf) else {
                    return Err(self.runtime_err(
                        tb,
                        pc,
                        l,
                        format!(
                            "cudaLaunchDeviceV2: {buf:#x} is not a parameter buffer of this TB \
                             from cudaGetParameterBufferV2 that is still to be launched"
                        ),
                    ));
                };
                b.launched = true;
                let (offset, size) = (b.offset, b.size);
                let launch = ChildLaunch {
                    kernel: b.kernel,
                    grid: b.grid,
                    block: b.block,
                    dynamic_shared: b.dynamic_shared,
                    params: rt.arena[offset..offset + size].to_vec(),
                    stream,
                    loc,
                    tb: tb.linear,
                    warp: self.id,
                };
                rt.launches.push(launch);
                Ok(0)
            }
            DeviceRuntimeFn::StreamCreateWithFlags => {
                let ptr = arg(self, 0, 0, 8)?;
                let h = tb.runtime.create_stream();
                self.runtime_store(tb, mem, pc, l, ptr, 8, h)?;
                Ok(0)
            }
            DeviceRuntimeFn::StreamDestroy => {
                let h = arg(self, 0, 0, 8)?;
                let streams = &mut tb.runtime.streams;
                Ok(match streams.iter().position(|&s| s == h) {
                    Some(i) => {
                        // Work already launched into it still runs (CUDA: the stream is
                        // released once its work completes).
                        streams.remove(i);
                        0
                    }
                    None => CUDA_ERROR_INVALID_RESOURCE_HANDLE,
                })
            }
            DeviceRuntimeFn::GetDevice => {
                let ptr = arg(self, 0, 0, 8)?;
                self.runtime_store(tb, mem, pc, l, ptr, 4, 0)?;
                Ok(0)
            }
            DeviceRuntimeFn::GetLastError | DeviceRuntimeFn::PeekAtLastError => Ok(0),
            DeviceRuntimeFn::DeviceSynchronize => Err(self.runtime_err(
                tb,
                pc,
                l,
                "cudaDeviceSynchronize from device code (CDP1) is not supported",
            )),
        }
    }
}
