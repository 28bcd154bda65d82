//! Delegates: backends that run part of a program themselves (an NPU driver,
//! a hand-written subgraph), as ExecuTorch's `BackendInterface`.

use etch_pte::schema::CompileSpec;
use etch_pte::Vector;

use crate::context::KernelContext;
use crate::Result;

/// What a backend returns from `init` to find its state again at `execute`;
/// the backend owns that state (in its own static memory).
pub type DelegateHandle = u32;

/// A backend, looked up by id (`BackendDelegate.id`, e.g. `EthosUBackend`).
pub trait Backend {
    fn id(&self) -> &str;
    /// Prepares the processed blob (inline data or segment, zero copy).
    fn init(
        &self,
        processed: &[u8],
        compile_specs: Vector<'_, CompileSpec<'_>>,
    ) -> Result<DelegateHandle>;
    /// Runs the delegate; its arguments are the `DelegateCall`'s values.
    fn execute(&self, handle: DelegateHandle, ctx: &mut KernelContext<'_, '_>) -> Result<()>;
}
