//! `Program`: a loaded `.pte` file.

use etch_pte::PteFile;

use crate::loader::{DataLoader, SegmentInfo};
use crate::meta::MethodMeta;
use crate::{Error, ErrorCode, Result};

/// How much of the file to check at load, as in ExecuTorch.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verification {
    /// Headers and root table only; for models verified at build time.
    /// Every later read is still bounds-checked.
    Minimal,
    /// The whole file, once (requires the `verify` feature; without it this
    /// falls back to `Minimal`, as ExecuTorch does when verification is
    /// compiled out).
    InternalConsistency,
}

/// A program, read in place from the loader's memory.
#[derive(Clone, Copy, Debug)]
pub struct Program<'a> {
    file: PteFile<'a>,
}

/// The file must be at least this aligned in memory: constant tensors are
/// 16-aligned relative to the file and kernels read 32-bit words from them.
pub const PROGRAM_ALIGNMENT: usize = 16;

impl<'a> Program<'a> {
    /// Loads the program from `loader` (zero copy) and verifies it as asked.
    pub fn load<L: DataLoader<'a>>(loader: &L, verification: Verification) -> Result<Self> {
        let data = loader.load(0, loader.size(), SegmentInfo::Program)?;
        Self::from_bytes(data, verification)
    }

    /// Same as [`Program::load`] over bytes already in memory.
    pub fn from_bytes(data: &'a [u8], verification: Verification) -> Result<Self> {
        if !(data.as_ptr() as usize).is_multiple_of(PROGRAM_ALIGNMENT) {
            etch_log!(
                error,
                "program data is not {}-byte aligned",
                PROGRAM_ALIGNMENT
            );
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "program data is not 16-byte aligned",
                0,
            ));
        }
        let file = match verification {
            #[cfg(feature = "verify")]
            Verification::InternalConsistency => PteFile::new_checked(data),
            _ => PteFile::new_unchecked(data),
        };
        let file = file.inspect_err(|_e| {
            etch_log!(error, "program rejected: {} at {}", _e.what(), _e.at());
        })?;
        Ok(Program { file })
    }

    /// Wraps a file view that was already checked (host tools).
    pub fn from_file(file: PteFile<'a>) -> Self {
        Program { file }
    }

    /// The underlying file view.
    pub fn file(&self) -> &PteFile<'a> {
        &self.file
    }

    pub fn num_methods(&self) -> Result<usize> {
        self.file.num_methods()
    }

    /// Name of method `index`.
    pub fn method_name(&self, index: usize) -> Result<&'a str> {
        self.file.program().execution_plan()?.get(index)?.name()
    }

    /// What method `name` needs: I/O, planned buffers, state bytes.
    pub fn method_meta(&self, name: &str) -> Result<MethodMeta<'a>> {
        MethodMeta::new(&self.file, &self.file.plan(name)?)
    }
}
