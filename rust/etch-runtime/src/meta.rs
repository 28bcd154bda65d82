//! `MethodMeta`: what a method needs, known before loading it.

use etch_pte::schema::{ExecutionPlan, Program, Tensor};
use etch_pte::{InstructionArgs, PteFile, Table, Value};

use crate::registry::{self, Kernel};
use crate::state::Layout;
use crate::tensor::Shape;
use crate::{Error, ErrorCode, Result, ScalarType};

/// Facts about one input or output tensor.
#[derive(Clone, Copy, Debug)]
pub struct TensorInfo<'a> {
    pub dtype: ScalarType,
    pub shape: Shape<'a>,
    pub nbytes: usize,
    /// Whether the exporter planned its memory (the usual case): `set_input`
    /// then copies into the planned buffer.
    pub is_memory_planned: bool,
    /// Whether it is bounded dynamic (`DYNAMIC_BOUND`): `shape` gives the
    /// upper bounds, and `Method::set_input` takes any sizes of its rank
    /// with at most as many elements.
    pub is_dynamic: bool,
}

impl<'a> TensorInfo<'a> {
    pub(crate) fn of(t: &Tensor<'a>) -> Result<Self> {
        Ok(TensorInfo {
            dtype: t.scalar_type()?,
            shape: Shape::from_serialized(t)?,
            nbytes: etch_pte::tensor::nbytes(t)?,
            is_memory_planned: t.allocation_info()?.is_some() || t.data_buffer_idx()? != 0,
            is_dynamic: t.shape_dynamism()? == etch_pte::ShapeDynamism::DynamicBound,
        })
    }
}

/// What method `name` needs: inputs, outputs, planned buffer sizes and the
/// exact number of state bytes `Method::load` will take.
///
/// Six words: the plan view, the file's bytes and its segment base; the file
/// view is made again by [`MethodMeta::file`]. As two views (36 B) every
/// copy of it (into a closure, into `Method`, out of `Result<Method>`) was
/// a `memcpy` call on Cortex-M, where LLVM copies up to 20 contiguous bytes
/// with loads and stores.
#[derive(Clone, Copy, Debug)]
pub struct MethodMeta<'a> {
    pub(crate) plan: ExecutionPlan<'a>,
    /// The whole file (the plan's buffer is its first `program_size` bytes).
    pub(crate) data: &'a [u8],
    /// [`PteFile::segment_base_offset`].
    segment_base: usize,
}

fn io_tensor<'a>(plan: &ExecutionPlan<'a>, index: i32) -> Result<Tensor<'a>> {
    match crate::values::value_of(&plan.values()?, index as usize)? {
        Value::Tensor(t) => Ok(t),
        _ => Err(Error::new(
            ErrorCode::InvalidType,
            "input/output is not a tensor",
            index as u32,
        )),
    }
}

impl<'a> MethodMeta<'a> {
    /// Method `plan` of `file`, after the same presence checks as
    /// ExecuTorch's `method_meta` (the name's was made when the plan was
    /// found by it).
    pub(crate) fn new(file: &PteFile<'a>, plan: &ExecutionPlan<'a>) -> Result<Self> {
        plan.inputs()?;
        plan.outputs()?;
        plan.non_const_buffer_sizes()?;
        Ok(Self::of(file, plan))
    }

    /// Method `plan` of `file`, unchecked.
    #[inline(always)]
    pub(crate) fn of(file: &PteFile<'a>, plan: &ExecutionPlan<'a>) -> Self {
        MethodMeta {
            plan: *plan,
            data: file.data(),
            segment_base: file.segment_base_offset(),
        }
    }

    pub fn name(&self) -> Result<&'a str> {
        self.plan.name()
    }

    pub fn num_inputs(&self) -> Result<usize> {
        Ok(self.plan.inputs()?.len())
    }

    pub fn num_outputs(&self) -> Result<usize> {
        Ok(self.plan.outputs()?.len())
    }

    pub fn input_tensor_meta(&self, i: usize) -> Result<TensorInfo<'a>> {
        TensorInfo::of(&io_tensor(&self.plan, self.plan.inputs()?.get(i)?)?)
    }

    pub fn output_tensor_meta(&self, i: usize) -> Result<TensorInfo<'a>> {
        TensorInfo::of(&io_tensor(&self.plan, self.plan.outputs()?.get(i)?)?)
    }

    /// Number of planned buffers (memory ids 1..=n).
    pub fn num_memory_planned_buffers(&self) -> Result<usize> {
        Ok(self.plan.non_const_buffer_sizes()?.len().saturating_sub(1))
    }

    /// Size of planned buffer `i` (memory id `i + 1`).
    pub fn memory_planned_buffer_size(&self, i: usize) -> Result<usize> {
        let size = self.plan.non_const_buffer_sizes()?.get(i + 1)?;
        usize::try_from(size).map_err(|_| {
            Error::new(
                ErrorCode::InvalidProgram,
                "planned buffer size invalid",
                i as u32,
            )
        })
    }

    /// Exact bytes of the `state` buffer `Method::load` takes with `kernels`
    /// (the largest `Kernel::scratch` of the operators the method calls is
    /// part of it).
    pub fn method_state_bytes(&self, kernels: &[Kernel]) -> Result<usize> {
        Ok(Layout::of(&self.plan, kernels, None)?.bytes())
    }

    /// The kernel scratch inside [`MethodMeta::method_state_bytes`]: the
    /// largest `Kernel::scratch` of the operators the method calls, in bytes.
    pub fn kernel_scratch_bytes(&self, kernels: &[Kernel]) -> Result<usize> {
        Ok(Layout::of(&self.plan, kernels, None)?.scratch)
    }

    /// The kernel calls decoded at load inside
    /// [`MethodMeta::method_state_bytes`] (`decoded-calls`; 0 without it), in
    /// bytes: per instruction a word, per kernel call its arguments' entries
    /// and extra words (each static tensor's sizes, data place and byte
    /// size; scalars; small lists), 4-byte aligned inside (+ 3 B). What
    /// `execute` reads instead of the program on every call.
    pub fn decoded_call_bytes(&self, kernels: &[Kernel]) -> Result<usize> {
        Ok(Layout::of(&self.plan, kernels, None)?.call_bytes())
    }

    /// Number of instructions over all chains.
    pub fn num_instructions(&self) -> Result<usize> {
        let mut n = 0;
        for chain in self.plan.chains()?.iter() {
            n += chain?.instructions()?.len();
        }
        Ok(n)
    }

    /// The execution plan, for tools that want the raw view.
    pub fn plan(&self) -> ExecutionPlan<'a> {
        self.plan
    }

    /// The program file the method belongs to, made again from the plan's
    /// buffer (the program), the file's bytes and its segment base; the root
    /// table's position is the program's first word, as when the file was
    /// opened.
    #[inline(always)]
    pub fn file(&self) -> PteFile<'a> {
        let program = self.plan.0.buffer();
        let root = program
            .first_chunk::<4>()
            .map_or(0, |b| u32::from_le_bytes(*b) as usize);
        PteFile::from_parts(
            self.data,
            self.segment_base,
            Program(Table::at_unchecked(program, root)),
        )
    }

    /// Calls `f(name, overload)` for each operator the method calls that
    /// `kernels` lacks: what `Method::load` would report as `OperatorMissing`.
    /// Returns how many are missing. Uses 128 B of stack: one pass over the
    /// instructions per 1,024 operators of the program (see
    /// [`MethodMeta::for_each_missing_operator_with`] for one pass in all).
    pub fn for_each_missing_operator<F: FnMut(&'a str, &'a str)>(
        &self,
        kernels: &[Kernel],
        mut f: F,
    ) -> Result<usize> {
        let mut used = [0u8; 128];
        self.missing_operators(kernels, &mut used, &mut f)
    }

    /// [`MethodMeta::for_each_missing_operator`] with the caller's scratch
    /// for the "is it called" bits, one bit per operator: with
    /// `operators / 8` bytes or more (rounded up) the instructions are read
    /// once, so the time is linear in the file however many operators it
    /// names (what host tools do). An empty `scratch` is
    /// `InvalidArgument`.
    pub fn for_each_missing_operator_with<F: FnMut(&'a str, &'a str)>(
        &self,
        kernels: &[Kernel],
        scratch: &mut [u8],
        mut f: F,
    ) -> Result<usize> {
        self.missing_operators(kernels, scratch, &mut f)
    }

    /// How many scratch bytes [`MethodMeta::for_each_missing_operator_with`]
    /// needs for a single pass: one bit per operator of the program.
    pub fn missing_operator_scratch_bytes(&self) -> Result<usize> {
        Ok(self.plan.operators()?.len().div_ceil(8))
    }

    // One copy of the walk, whatever the callback.
    //
    // Which operators are called is marked in a bitset of `used.len() * 8`
    // operators (a window), one pass over the instructions per window:
    // linear in the file up to one window of operators (asking each operator
    // "is it called?" with its own pass was O(operators x instructions):
    // 9.4 s for a 1 MB file of 11,034 missing operators).
    #[inline(never)]
    fn missing_operators(
        &self,
        kernels: &[Kernel],
        used: &mut [u8],
        f: &mut dyn FnMut(&'a str, &'a str),
    ) -> Result<usize> {
        let window = used.len().saturating_mul(8);
        if window == 0 {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "missing operators: empty scratch",
                0,
            ));
        }
        let operators = self.plan.operators()?;
        // As `Layout::of`: more instructions than program words come only
        // from chains sharing instruction vectors.
        let words = self.plan.0.buffer().len() / 4;
        let mut missing = 0;
        let mut start = 0;
        while start < operators.len() {
            let len = (operators.len() - start).min(window);
            used.fill(0);
            let mut seen = 0usize;
            for chain in self.plan.chains()?.iter() {
                for instr in chain?.instructions()?.iter() {
                    seen += 1;
                    if seen > words {
                        return Err(Error::new(
                            ErrorCode::InvalidProgram,
                            "as many instructions as program words",
                            seen as u32,
                        ));
                    }
                    if let InstructionArgs::KernelCall { op_index, .. } = instr?.args()? {
                        let k = (op_index as usize).wrapping_sub(start);
                        if k < len {
                            if let Some(b) = used.get_mut(k / 8) {
                                *b |= 1 << (k % 8);
                            }
                        }
                    }
                }
            }
            for k in 0..len {
                if used.get(k / 8).is_none_or(|b| b & (1 << (k % 8)) == 0) {
                    continue;
                }
                let op = operators.get(start + k)?;
                let (name, overload) = (op.name()?, op.overload()?);
                if registry::find(kernels, name, overload).is_some() {
                    continue;
                }
                missing += 1;
                f(name, overload);
            }
            start += len;
        }
        Ok(missing)
    }

    /// How many distinct operators the method calls that `kernels` lacks
    /// (what [`MethodMeta::for_each_missing_operator`] returns), on the raw
    /// name bytes: no UTF-8 validation in firmware.
    pub fn count_missing_operators(&self, kernels: &[Kernel]) -> Result<usize> {
        Ok(Layout::of(&self.plan, kernels, None)?.missing)
    }

    /// `(name, overload)` of the operator instruction `index` (numbered across
    /// chains) calls: names the operator of an error whose `at` is an
    /// instruction, such as a schema mismatch at load.
    pub fn operator_of_instruction(&self, index: usize) -> Result<(&'a str, &'a str)> {
        let mut base = 0;
        for chain in self.plan.chains()?.iter() {
            let instructions = chain?.instructions()?;
            if index < base + instructions.len() {
                if let InstructionArgs::KernelCall { op_index, .. } =
                    instructions.get(index - base)?.args()?
                {
                    let op = self.plan.operators()?.get(op_index as usize)?;
                    return Ok((op.name()?, op.overload()?));
                }
                break;
            }
            base += instructions.len();
        }
        Err(Error::new(
            ErrorCode::NotFound,
            "instruction is not a kernel call",
            index as u32,
        ))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Program;
    use std::vec::Vec;

    /// Six words (24 B on Cortex-M): the most LLVM copies without `memcpy`
    /// where a copy loses a word to the `Result` niche.
    #[test]
    fn six_words() {
        assert_eq!(
            core::mem::size_of::<MethodMeta<'_>>(),
            6 * core::mem::size_of::<usize>()
        );
    }

    /// `MethodMeta::file` makes the same view again: same bytes, segment base,
    /// program and root table, and the same segments, for every method of
    /// every fixture.
    #[test]
    fn file_made_again_from_the_meta() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
        let mut checked = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_none_or(|x| x != "pte") {
                continue;
            }
            let bytes = std::fs::read(&p).unwrap();
            let file = PteFile::new_checked(&bytes).unwrap();
            let program = Program::from_file(file);
            for m in 0..program.num_methods().unwrap() {
                let name = program.method_name(m).unwrap();
                let meta = program.method_meta(name).unwrap();
                let again = meta.file();
                assert_eq!(again.data().as_ptr(), bytes.as_ptr());
                assert_eq!(again.data().len(), bytes.len());
                assert_eq!(again.segment_base_offset(), file.segment_base_offset());
                assert_eq!(again.program_size(), file.program_size());
                assert_eq!(again.program().position(), file.program().position());
                assert_eq!(meta.plan().position(), file.plan(name).unwrap().position());
                let n = file.program().segments().unwrap().len();
                let segs = |f: &PteFile<'_>| {
                    (0..n)
                        .map(|i| f.segment(i).map(|s| (s.as_ptr(), s.len())).ok())
                        .collect::<Vec<_>>()
                };
                assert_eq!(segs(&again), segs(&file));
                checked += 1;
            }
        }
        assert!(
            checked >= 10,
            "expected the committed fixtures, found {checked} methods"
        );
    }
}
