//! What a caller can watch while a method runs: hooks around every
//! instruction and the values each one read and wrote.

use etch_pte::{Value, Vector};

use super::value_of;
use super::{Method, Output};
use crate::{Error, ErrorCode, Result};

/// Hooks called around every instruction (profiling, benchmark markers).
/// The default methods do nothing and compile away.
pub trait ExecutionObserver {
    /// Before instruction `index` (numbered across chains); `op` is the
    /// operator-table index for kernel calls.
    fn before(&mut self, _index: u32, _op: Option<u32>) {}
    fn after(&mut self, _index: u32) {}
    /// After instruction `index` (a kernel or delegate call), with its
    /// arguments' values: what an observer needs to record intermediate
    /// outputs (for a kernel call the last argument is its return value).
    fn after_values(&mut self, _index: u32, _values: &InstructionValues<'_, '_, '_>) {}
}

/// The arguments of the instruction that just ran, read-only.
pub struct InstructionValues<'v, 'a, 'm> {
    pub(super) method: &'v Method<'a, 'm>,
    pub(super) args: Vector<'a, i32>,
}

impl<'v> InstructionValues<'v, '_, '_> {
    /// Number of arguments: for a kernel call the schema arguments (`out`
    /// included), then the return value.
    pub fn len(&self) -> usize {
        self.args.len()
    }

    pub fn is_empty(&self) -> bool {
        self.args.is_empty()
    }

    fn value_index(&self, i: usize) -> Result<usize> {
        usize::try_from(self.args.get(i)?)
            .map_err(|_| Error::new(ErrorCode::InvalidProgram, "negative value index", i as u32))
    }

    /// Argument `i` as it is now; `NotSupported` for lists (see
    /// [`InstructionValues::list_len`]).
    pub fn get(&self, i: usize) -> Result<Output<'v>> {
        self.method.value_output(self.value_index(i)?, i as u32)
    }

    /// The number of tensors when argument `i` is a tensor list.
    pub fn list_len(&self, i: usize) -> Result<Option<usize>> {
        match value_of(&self.method.values, self.value_index(i)?)? {
            Value::TensorList(items) => Ok(Some(items.len())),
            _ => Ok(None),
        }
    }

    /// Tensor `j` of the tensor list in argument `i`.
    pub fn list_item(&self, i: usize, j: usize) -> Result<Output<'v>> {
        match value_of(&self.method.values, self.value_index(i)?)? {
            Value::TensorList(items) => {
                let v = usize::try_from(items.get(j)?).map_err(|_| {
                    Error::new(ErrorCode::InvalidProgram, "bad TensorList item", i as u32)
                })?;
                self.method.value_output(v, i as u32)
            }
            _ => Err(Error::new(
                ErrorCode::InvalidArgument,
                "argument is not a TensorList",
                i as u32,
            )),
        }
    }
}

/// An observer that observes nothing.
pub struct NoObserver;
impl ExecutionObserver for NoObserver {}
