//! The memory a functional run or a timing simulation of a launch needs, worked out from the
//! kernel and the launch before anything is allocated, and checked against the process's
//! [`MemoryBudget`] (half the machine, or `PAVER_MEMORY_LIMIT`).
//!
//! What the interpreter holds: the launch's buffers and the module's `.global` / `.const`
//! variables (global memory), and per TB in flight its shared memory and every thread's
//! local memory (whole warps of 32 lanes). A `paver run` keeps the initial global memory
//! and the memory after the run (snapshot model), and the variables once more as decoded
//! images; the timing simulator keeps one global memory plus the images.
//!
//! CUDA's own limits come first, because they say what a GPU would do: at most
//! [`MAX_LOCAL_PER_THREAD`] of local memory per thread (CUDA C++ Programming Guide,
//! "Features and Technical Specifications": 512 KB for every compute capability since 2.0).

use launch::budget::human_bytes;
use launch::{BoundLaunch, MemoryBudget};
use ptx_parser::{Function, Module, StateSpace};

use crate::SimError;

/// Most local memory one thread may have (CUDA, compute capability 2.0 and later).
pub const MAX_LOCAL_PER_THREAD: u64 = 512 << 10;

/// Sizes of what a launch allocates, in bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryNeeds {
    /// The launch's buffers together.
    pub buffers: u64,
    /// The largest buffer (`paver run` encodes one at a time for its `.npy` file).
    pub largest_buffer: u64,
    /// The module's `.global` and `.const` variables together.
    pub variables: u64,
    /// Shared memory of one TB (static and dynamic).
    pub shared_per_tb: u64,
    /// Local memory of one thread.
    pub local_per_thread: u64,
    /// Threads of one TB, rounded up to whole warps (local memory is allocated per warp).
    pub lanes_per_tb: u64,
}

impl MemoryNeeds {
    /// The sizes for kernel `f` of `module` launched as `bound`, without allocating.
    pub fn of(module: &Module, f: &Function, bound: &BoundLaunch) -> MemoryNeeds {
        let size = |v: &ptx_parser::GlobalVar| v.size_bytes().unwrap_or(u64::MAX);
        let variables = module
            .globals
            .iter()
            .filter(|g| matches!(g.space, StateSpace::Global | StateSpace::Const))
            .map(size)
            .fold(0, u64::saturating_add);
        let local_per_thread = f
            .local_vars
            .iter()
            .filter(|l| l.var.space == StateSpace::Local)
            .map(|l| size(&l.var))
            .fold(0, u64::saturating_add);
        let largest_buffer = bound
            .params
            .iter()
            .map(|p| match &p.value {
                launch::BoundValue::Buffer { elem, len, .. } => {
                    len.saturating_mul(elem.size() as u64)
                }
                _ => 0,
            })
            .max()
            .unwrap_or(0);
        MemoryNeeds {
            buffers: bound.buffer_bytes(),
            largest_buffer,
            variables,
            shared_per_tb: gpu::resources::declared_shared_bytes(module, f)
                .saturating_add(bound.dynamic_shared_bytes),
            local_per_thread,
            lanes_per_tb: bound.block.count().div_ceil(32).saturating_mul(32),
        }
    }

    /// Memory of one TB in flight: shared memory plus every lane's local memory.
    pub fn per_tb(&self) -> u64 {
        self.shared_per_tb
            .saturating_add(self.local_per_thread.saturating_mul(self.lanes_per_tb))
    }

    /// Checks a functional run (`paver run`, `analyze --dynamic`) with `workers` TBs in
    /// flight at once.
    pub fn check_run(&self, workers: u64, budget: &MemoryBudget) -> Result<(), SimError> {
        self.check_local()?;
        let total = self
            .buffers
            .saturating_mul(2)
            .saturating_add(self.largest_buffer)
            .saturating_add(self.variables.saturating_mul(3))
            .saturating_add(self.per_tb().saturating_mul(workers.max(1)));
        self.check_total(total, workers.max(1), "the run", budget)
    }

    /// Checks a timing simulation with at most `resident_tbs` TBs resident at once.
    pub fn check_simulation(
        &self,
        resident_tbs: u64,
        budget: &MemoryBudget,
    ) -> Result<(), SimError> {
        self.check_local()?;
        let total = self
            .buffers
            .saturating_add(self.variables.saturating_mul(2))
            .saturating_add(self.per_tb().saturating_mul(resident_tbs.max(1)));
        self.check_total(total, resident_tbs.max(1), "the simulation", budget)
    }

    fn check_local(&self) -> Result<(), SimError> {
        if self.local_per_thread > MAX_LOCAL_PER_THREAD {
            return Err(SimError::LocalMemory {
                declared: human_bytes(self.local_per_thread),
                max: human_bytes(MAX_LOCAL_PER_THREAD),
            });
        }
        Ok(())
    }

    fn check_total(
        &self,
        total: u64,
        tbs: u64,
        what: &str,
        budget: &MemoryBudget,
    ) -> Result<(), SimError> {
        let what = format!(
            "{what} (buffers {}, module variables {}, {tbs} TB(s) in flight x (shared {} + local {} x {} threads))",
            human_bytes(self.buffers),
            human_bytes(self.variables),
            human_bytes(self.shared_per_tb),
            human_bytes(self.local_per_thread),
            self.lanes_per_tb
        );
        budget.check(&what, total).map_err(SimError::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(src: &str, block: u64, dynamic: u64) -> MemoryNeeds {
        let m = ptx_parser::parse(src).unwrap();
        let f = m.entries().next().unwrap();
        let mut l = launch::Launch::new(
            launch::Dim3 { x: 1, y: 1, z: 1 },
            launch::Dim3 {
                x: block,
                y: 1,
                z: 1,
            },
        );
        l.dynamic_shared_bytes = dynamic;
        let b = l
            .bind(&f.name, &crate::param_sigs(f), std::path::Path::new("."))
            .unwrap();
        MemoryNeeds::of(&m, f, &b)
    }

    const HEAD: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

    #[test]
    fn sizes_come_from_the_declarations() {
        let src = format!(
            "{HEAD}.global .align 4 .b8 g[4096];\n.visible .entry k()\n{{\n.local .align 4 .b8 l[100];\n.shared .align 4 .b8 s[256];\nret;\n}}\n"
        );
        let n = needs(&src, 40, 1000);
        assert_eq!(n.variables, 4096);
        assert_eq!(n.local_per_thread, 100);
        assert_eq!(n.shared_per_tb, 1256);
        assert_eq!(n.lanes_per_tb, 64);
        assert_eq!(n.per_tb(), 1256 + 6400);
    }

    #[test]
    fn budget_and_cuda_limits() {
        let budget = MemoryBudget {
            bytes: 1 << 30,
            source: launch::budget::BudgetSource::Env,
        };
        // 1 TiB of dynamic shared memory.
        let n = needs(
            &format!("{HEAD}.visible .entry k()\n{{\nret;\n}}\n"),
            32,
            1 << 40,
        );
        let e = n.check_run(1, &budget).unwrap_err().to_string();
        assert!(
            e.contains("shared 1.0 TiB") && e.contains("budget of 1.0 GiB"),
            "{e}"
        );
        // 100 MB of local memory per thread: over CUDA's 512 KB.
        let src =
            format!("{HEAD}.visible .entry k()\n{{\n.local .align 4 .b8 l[100000000];\nret;\n}}\n");
        let e = needs(&src, 1024, 0)
            .check_simulation(1, &budget)
            .unwrap_err()
            .to_string();
        assert!(e.contains("512.0 KiB"), "{e}");
        // A 4 GiB `.global` array: three copies in a run.
        let src = format!(
            "{HEAD}.global .align 4 .b8 g[65536][65536];\n.visible .entry k()\n{{\nret;\n}}\n"
        );
        let n = needs(&src, 32, 0);
        let big = MemoryBudget {
            bytes: 10 << 30,
            source: launch::budget::BudgetSource::Env,
        };
        assert!(n.check_run(1, &big).is_err());
        assert!(n.check_simulation(1, &big).is_ok());
    }
}
