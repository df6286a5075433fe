//! One kernel launch, before any GPU: the parsed module, the chosen kernel, the launch as
//! given and bound, and what the static analysis derives from them (footprints, the TB
//! locality graph, the Locality Descriptors), each computed at most once per granularity
//! however many GPUs, policies and runs ask for it, from however many threads.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use analysis::descriptor::Derived;
use analysis::footprint::Granularity;
use analysis::locality::{Graph, Stats};
use analysis::{Analysis, AnalysisError};
use gpu::KernelResources;
use launch::{BoundLaunch, Launch};
use ptx_parser::{Function, Module};

use crate::error::{Error, Result};

/// A bound launch of one kernel of a module.
pub struct Workload {
    /// The whole module (globals, other functions); the kernel's calls are inlined.
    pub module: Module,
    /// The file holding the module's PTX, which ptxas reads for the kernel's resources
    /// (absent for PTX that exists only in memory).
    pub ptx_file: Option<PathBuf>,
    /// Index of the kernel in `module.functions`.
    kernel: usize,
    /// The launch as given (file and flags), before binding.
    pub launch: Launch,
    /// The launch bound to the kernel's parameters.
    pub bound: BoundLaunch,
    /// The static analysis's options (memory budget, may-loads).
    options: analysis::Options,
    /// The analyses made so far, one per granularity asked for.
    analyses: Mutex<Vec<(Granularity, Arc<AnalysisCell>)>>,
    /// The kernel's resources found so far, by (GPU architecture, ptxas), with any warning.
    resources: Mutex<Vec<(ResourceKey, Found)>>,
    /// How often each expensive step ran (for tests that it runs once).
    counters: Counters,
}

/// What the kernel's resources depend on beside the launch: the GPU's architecture (ptxas's
/// target, the recorded numbers chosen) and the ptxas found, if any.
type ResourceKey = (String, Option<PathBuf>);

/// The resources found, with a warning when ptxas failed and another source was used.
type Found = (KernelResources, Option<String>);

/// One granularity's analysis, computed by the first thread that asks.
type AnalysisCell = OnceLock<Result<Arc<Analysed>, Arc<AnalysisError>>>;

/// How many times the expensive steps of a launch ran.
#[derive(Debug, Default)]
pub struct Counters {
    analyses: AtomicU32,
    descriptors: AtomicU32,
    graphs: AtomicU32,
    ptxas: AtomicU32,
}

/// A snapshot of [`Counters`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Static analyses (footprints).
    pub analyses: u32,
    /// Locality Descriptor computations (the z3 questions).
    pub descriptors: u32,
    /// Locality graphs built.
    pub graphs: u32,
    /// ptxas runs for the kernel's resources.
    pub ptxas: u32,
}

/// The static analysis of a launch at one granularity, with the graph and descriptors
/// derived from it on first use.
pub struct Analysed {
    /// Footprints, loads and their expressions.
    pub analysis: Analysis,
    /// The granularity of its data units.
    pub granularity: Granularity,
    graph: OnceLock<(Graph, Stats)>,
    descriptors: OnceLock<Vec<Derived>>,
}

impl Workload {
    /// The launch `bound` of function `kernel` of `module` (calls already inlined), given as
    /// `launch`; the analysis will run with `options`.
    pub fn new(
        module: Module,
        kernel: usize,
        ptx_file: Option<PathBuf>,
        launch: Launch,
        bound: BoundLaunch,
        options: analysis::Options,
    ) -> Workload {
        Workload {
            module,
            ptx_file,
            kernel,
            launch,
            bound,
            options,
            analyses: Mutex::new(Vec::new()),
            resources: Mutex::new(Vec::new()),
            counters: Counters::default(),
        }
    }

    /// The kernel.
    pub fn kernel(&self) -> &Function {
        &self.module.functions[self.kernel]
    }

    /// The kernel's index in `module.functions`.
    pub fn kernel_index(&self) -> usize {
        self.kernel
    }

    /// The static analysis's options.
    pub fn analysis_options(&self) -> &analysis::Options {
        &self.options
    }

    /// How many times each expensive step has run for this launch.
    pub fn counts(&self) -> Counts {
        let c = &self.counters;
        Counts {
            analyses: c.analyses.load(Ordering::Relaxed),
            descriptors: c.descriptors.load(Ordering::Relaxed),
            graphs: c.graphs.load(Ordering::Relaxed),
            ptxas: c.ptxas.load(Ordering::Relaxed),
        }
    }

    /// The kernel's resources on `gpu` (ptxas's numbers when `ptxas` is given and the PTX is
    /// in a file, else the launch file's recorded ones, else the liveness estimate), with a
    /// warning when ptxas failed; found once per architecture and ptxas.
    pub fn resources(&self, gpu: &gpu::GpuConfig, ptxas: Option<PathBuf>) -> Found {
        let key = (gpu.arch.clone(), ptxas);
        let mut all = self.resources.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, r)) = all.iter().find(|(k, _)| *k == key) {
            return r.clone();
        }
        if key.1.is_some() && self.ptx_file.is_some() {
            self.counters.ptxas.fetch_add(1, Ordering::Relaxed);
        }
        let recorded = crate::recorded(&self.launch);
        let inputs = gpu::ResourceInputs {
            module: &self.module,
            function: self.kernel(),
            ptx_path: self.ptx_file.as_deref(),
            ptxas: key.1.as_deref(),
            recorded: &recorded,
            threads_per_tb: u32::try_from(self.bound.block.count()).unwrap_or(u32::MAX),
            dynamic_shared_bytes: self.bound.dynamic_shared_bytes,
        };
        let r = gpu::kernel_resources(gpu, &inputs);
        all.push((key, r.clone()));
        r
    }

    /// The static analysis at granularity `gran`: run on the first call, shared after (an
    /// error too: it would only fail again).
    pub fn analysis(&self, gran: Granularity) -> Result<Arc<Analysed>> {
        let cell = {
            let mut all = self.analyses.lock().unwrap_or_else(|p| p.into_inner());
            match all.iter().find(|(g, _)| *g == gran) {
                Some((_, c)) => Arc::clone(c),
                None => {
                    let c = Arc::new(AnalysisCell::new());
                    all.push((gran, Arc::clone(&c)));
                    c
                }
            }
        };
        cell.get_or_init(|| {
            self.counters.analyses.fetch_add(1, Ordering::Relaxed);
            analysis::analyze_with(self.kernel(), &self.bound, gran, &self.options)
                .map(|analysis| {
                    Arc::new(Analysed {
                        analysis,
                        granularity: gran,
                        graph: OnceLock::new(),
                        descriptors: OnceLock::new(),
                    })
                })
                .map_err(Arc::new)
        })
        .clone()
        .map_err(Error::Analysis)
    }

    /// Hands an analysis made elsewhere (`paver analyze --dynamic`, from the interpreter's
    /// accesses) to this workload as its analysis at `gran`, in place of any made before.
    pub fn adopt_analysis(&self, gran: Granularity, analysis: Analysis) -> Arc<Analysed> {
        let a = Arc::new(Analysed {
            analysis,
            granularity: gran,
            graph: OnceLock::new(),
            descriptors: OnceLock::new(),
        });
        let cell = AnalysisCell::new();
        let _ = cell.set(Ok(Arc::clone(&a)));
        let mut all = self.analyses.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|(g, _)| *g != gran);
        all.push((gran, Arc::new(cell)));
        a
    }
}

impl Analysed {
    /// The TB locality graph (PAVER §4.1) with its Table 2 statistics, built on first use.
    pub fn graph(&self, w: &Workload) -> (&Graph, &Stats) {
        let (g, s) = self.graph.get_or_init(|| {
            w.counters.graphs.fetch_add(1, Ordering::Relaxed);
            analysis::locality::build(&self.analysis.footprints)
        });
        (g, s)
    }

    /// The Locality Descriptors of the launch's pointer parameters, computed on first use.
    pub fn descriptors(&self, w: &Workload) -> &[Derived] {
        self.descriptors.get_or_init(|| {
            w.counters.descriptors.fetch_add(1, Ordering::Relaxed);
            analysis::descriptor::compute(w.kernel(), &self.analysis, &w.bound)
        })
    }
}
