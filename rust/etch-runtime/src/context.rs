//! `KernelContext`: a kernel's view of its arguments.
//!
//! Arguments are positions in the instruction's argument list (the operator's
//! schema arguments in order, `out` included, then the return value). Scalars
//! and lists are read from the program in place; tensors resolve to constants
//! (zero copy, in flash) or to bytes of the planned buffers, split so that
//! writable tensors never alias readable ones (see `memory`).

use etch_pte::schema::EValue;
use etch_pte::{Value, ValueKind, Vector};

use crate::calls::{self, resolve_tensor, Call, Resolved};
use crate::memory::{overlap, Pieces, MAX_OUTPUTS};
use crate::meta::MethodMeta;
use crate::overrides::{Overrides, OverridesMut, UNSET};
use crate::tensor::{Shape, TensorView, TensorViewMut};
use crate::values::{bad_arg, Loc};
use crate::{Result, ScalarType};

/// The planned buffers, seen through a trait object so the context needs no
/// extra lifetime parameter for the caller's buffer slices.
pub(crate) trait Arenas {
    /// Fills `out` (from [`Pieces::empty`]) with the whole buffers.
    fn pieces<'p>(&'p mut self, out: &mut Pieces<'p>);
    /// Buffer `memory` split around bytes `offset..offset + len`: the bytes
    /// before (read-only), those (writable) and the bytes after
    /// (read-only); `None` if the buffer does not hold them.
    fn split<'p>(&'p mut self, memory: usize, offset: usize, len: usize) -> Option<Split<'p>>;
}

/// A planned buffer around one writable tensor ([`Arenas::split`]).
pub(crate) type Split<'p> = (&'p [u8], &'p mut [u8], &'p [u8]);

impl Arenas for &mut [&mut [u8]] {
    fn pieces<'p>(&'p mut self, out: &mut Pieces<'p>) {
        out.fill(self)
    }
    fn split<'p>(&'p mut self, memory: usize, offset: usize, len: usize) -> Option<Split<'p>> {
        let buf: &'p mut [u8] = self.get_mut(memory)?;
        let (before, rest) = buf.split_at_mut_checked(offset)?;
        let (data, after) = rest.split_at_mut_checked(len)?;
        Some((before, data, after))
    }
}

/// Up to 16 integers of an `int[]` argument, read once.
#[derive(Clone, Copy, Debug)]
pub struct IntList {
    items: [i64; etch_pte::tensor::MAX_RANK],
    len: usize,
}

impl IntList {
    pub fn as_slice(&self) -> &[i64] {
        self.items.get(..self.len).unwrap_or(&[])
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Item `k`, or `default` if the list is shorter (PyTorch's `int[2]`
    /// arguments may be given as one value).
    pub fn get_or(&self, k: usize, default: i64) -> i64 {
        self.as_slice().get(k).copied().unwrap_or(default)
    }
}

/// A kernel's (or delegate's) view of one instruction's arguments.
pub struct KernelContext<'c, 'a> {
    /// The method (its file, for constant data).
    pub(crate) meta: &'c MethodMeta<'a>,
    pub(crate) values: Vector<'a, EValue<'a>>,
    pub(crate) args: Vector<'a, i32>,
    /// The call's arguments as decoded at load (`calls`; `Call::NONE` for
    /// delegate calls): what it does not hold is read from `args`.
    pub(crate) call: Call<'c>,
    pub(crate) memory: &'c mut dyn Arenas,
    pub(crate) overrides: OverridesMut<'c>,
    /// Run-time sizes of bounded dynamic tensors (`dims`).
    pub(crate) dims: &'c mut [u8],
    /// The method's kernel scratch (`Kernel::scratch` bytes at least, as
    /// 8-byte words), until a kernel takes it.
    pub(crate) scratch: &'c mut [u64],
    /// Index of the running kernel in the slice given to `Method::load`
    /// (`usize::MAX` for a delegate call).
    pub(crate) kernel: usize,
}

impl<'c, 'a> KernelContext<'c, 'a> {
    /// Index of the running kernel in the kernel slice the method was loaded
    /// with (`None` in a delegate call): lets one run function serve several
    /// registered kernels (the C API's kernels share one).
    pub fn kernel_index(&self) -> Option<usize> {
        (self.kernel != usize::MAX).then_some(self.kernel)
    }

    /// The method's kernel scratch: at least the running kernel's declared
    /// `Kernel::scratch` bytes, as 8-byte words (contents left from earlier
    /// calls; cast with `bytemuck`). Taken once per call (a second take gets
    /// an empty slice), so it can be held alongside the views of
    /// [`KernelContext::io`].
    pub fn take_scratch(&mut self) -> &'c mut [u64] {
        core::mem::take(&mut self.scratch)
    }

    /// Number of arguments.
    pub fn num_args(&self) -> usize {
        self.args.len()
    }

    /// Value-table index of argument `i`.
    pub fn value_index(&self, i: usize) -> Result<usize> {
        let v = self.args.get(i)?;
        usize::try_from(v).map_err(|_| bad_arg("negative value index", i))
    }

    /// Argument `i`'s kind.
    pub fn kind(&self, i: usize) -> Result<ValueKind> {
        let kind = match self.call.entry(i) & 15 {
            calls::NULL => ValueKind::Null,
            calls::INT | calls::WIDE => ValueKind::Int,
            calls::BOOL => ValueKind::Bool,
            calls::DOUBLE => ValueKind::Double,
            calls::LIST | calls::PAIR => ValueKind::IntList,
            calls::TENSOR => ValueKind::Tensor,
            _ => {
                let v = self.value_index(i)?;
                let declared = self.values.get(v)?.kind()?;
                return Ok(self.overrides.as_ref().kind(v, declared));
            }
        };
        Ok(kind)
    }

    /// Argument `i`'s value, with run-time written scalars applied: from
    /// the call's table for the scalars decoded at load.
    fn value(&self, i: usize) -> Result<Value<'a>> {
        let e = self.call.entry(i);
        match e & 15 {
            calls::NULL => return Ok(Value::Null),
            calls::BOOL => return Ok(Value::Bool(e >> 4 != 0)),
            calls::DOUBLE => {
                if let Some(bits) = self.call.wide((e >> 4) as usize) {
                    return Ok(Value::Double(f64::from_bits(bits)));
                }
            }
            _ => {
                if let Some(x) = self.call.int(e) {
                    return Ok(Value::Int(x));
                }
            }
        }
        self.value_at(self.value_index(i)?)
    }

    /// Value `v`, a scalar of the kind and payload its last writer gave it.
    fn value_at(&self, v: usize) -> Result<Value<'a>> {
        let value = self.values.get(v)?.value()?;
        Ok(self.overrides.as_ref().current(v, value))
    }

    pub fn is_null(&self, i: usize) -> Result<bool> {
        Ok(self.kind(i)? == ValueKind::Null)
    }

    pub fn int(&self, i: usize) -> Result<i64> {
        if let Some(x) = self.call.int(self.call.entry(i)) {
            return Ok(x);
        }
        match self.value(i)? {
            Value::Int(v) => Ok(v),
            _ => Err(bad_arg("argument is not an Int", i)),
        }
    }

    /// An Int argument as `int32` (`InvalidArgument` out of its range),
    /// inline: a few instructions when load decoded it (through
    /// [`KernelContext::int`] about 30), for the kernels where that counts
    /// (a small fully connected layer reads five on every call; the flash
    /// is per call site).
    #[inline(always)]
    pub fn i32(&self, i: usize) -> Result<i32> {
        let e = self.call.entry(i);
        if e & 15 == calls::INT {
            // 28 bits, sign-extended: always an int32.
            return Ok((e as i32) >> 4);
        }
        i32::try_from(self.int(i)?).map_err(|_| bad_arg("argument out of int32 range", i))
    }

    /// An `int?` argument.
    pub fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        match self.value(i)? {
            Value::Int(v) => Ok(Some(v)),
            Value::Null => Ok(None),
            _ => Err(bad_arg("argument is not an Int or None", i)),
        }
    }

    pub fn double(&self, i: usize) -> Result<f64> {
        match self.value(i)? {
            Value::Double(v) => Ok(v),
            _ => Err(bad_arg("argument is not a Double", i)),
        }
    }

    /// A `Scalar` argument (Int, Double or Bool) as f64.
    pub fn scalar_f64(&self, i: usize) -> Result<f64> {
        match self.value(i)? {
            Value::Double(v) => Ok(v),
            Value::Int(v) => Ok(v as f64),
            Value::Bool(v) => Ok(v as u8 as f64),
            _ => Err(bad_arg("argument is not a Scalar", i)),
        }
    }

    pub fn bool(&self, i: usize) -> Result<bool> {
        match self.value(i)? {
            Value::Bool(v) => Ok(v),
            _ => Err(bad_arg("argument is not a Bool", i)),
        }
    }

    /// A `str` or `str?` argument's bytes, `None` when Null (gelu's
    /// `approximate`, div's `rounding_mode`).
    pub fn opt_str(&self, i: usize) -> Result<Option<&'a [u8]>> {
        match self.value(i)? {
            Value::String(s) => Ok(Some(s)),
            Value::Null => Ok(None),
            _ => Err(bad_arg("argument is not a String", i)),
        }
    }

    /// Length of an `int[]` argument.
    pub fn int_list_len(&self, i: usize) -> Result<usize> {
        if let Some(len) = self.call.list_len(self.call.entry(i)) {
            return Ok(len);
        }
        match self.value(i)? {
            Value::IntList(items) => Ok(items.len()),
            _ => Err(bad_arg("argument is not an IntList", i)),
        }
    }

    /// Item `k` of an `int[]` argument (items are value indices of Ints).
    pub fn int_list_item(&self, i: usize, k: usize) -> Result<i64> {
        // A list decoded at load: one out-of-line read (`None` for another
        // entry or past the list's end, which the slow path tells apart).
        if let Some(x) = self.call.list_item(self.call.entry(i), k) {
            return Ok(x);
        }
        self.int_list_item_slow(i, k)
    }

    #[inline(never)]
    fn int_list_item_slow(&self, i: usize, k: usize) -> Result<i64> {
        let e = self.call.entry(i);
        if self.call.list_len(e).is_some() {
            return self
                .call
                .list_item(e, k)
                .ok_or(bad_arg("IntList item out of range", i));
        }
        let Value::IntList(items) = self.value(i)? else {
            return Err(bad_arg("argument is not an IntList", i));
        };
        let v = usize::try_from(items.get(k)?).map_err(|_| bad_arg("bad IntList item", i))?;
        match self.value_at(v)? {
            Value::Int(x) => Ok(x),
            _ => Err(bad_arg("IntList item is not an Int", i)),
        }
    }

    /// An `int[]` argument of at most 16 items. The list is decoded once
    /// (not once per item, as `int_list_item` would): kernels read their
    /// strides, paddings and kernel sizes on every call.
    pub fn int_list(&self, i: usize) -> Result<IntList> {
        let mut list = IntList {
            items: [0; etch_pte::tensor::MAX_RANK],
            len: 0,
        };
        list.len = self.int_list_into(i, &mut list.items)?;
        Ok(list)
    }

    /// The first `out.len()` items of an `int[]` argument of at most 16
    /// items into `out` (fewer if the list is shorter); returns the list's
    /// length. For kernels that need two values (stride, padding), without
    /// [`IntList`]'s 136 bytes.
    pub fn int_list_into(&self, i: usize, out: &mut [i64]) -> Result<usize> {
        let e = self.call.entry(i);
        if let Some(len) = self.call.list_len(e) {
            for (k, slot) in out.iter_mut().take(len).enumerate() {
                *slot = self
                    .call
                    .list_item(e, k)
                    .ok_or(bad_arg("IntList item is not an Int", i))?;
            }
            return Ok(len);
        }
        let Value::IntList(items) = self.value(i)? else {
            return Err(bad_arg("argument is not an IntList", i));
        };
        let len = items.len();
        if len > etch_pte::tensor::MAX_RANK {
            return Err(bad_arg("IntList longer than 16", i));
        }
        for (k, slot) in out.iter_mut().take(len).enumerate() {
            let v = usize::try_from(items.get(k)?).map_err(|_| bad_arg("bad IntList item", i))?;
            *slot = match self.value_at(v)? {
                Value::Int(x) => x,
                _ => return Err(bad_arg("IntList item is not an Int", i)),
            };
        }
        Ok(len)
    }

    /// A `ScalarType` argument.
    pub fn scalar_type(&self, i: usize) -> Result<ScalarType> {
        let code = self.int(i)?;
        i8::try_from(code)
            .map(ScalarType)
            .map_err(|_| bad_arg("ScalarType out of range", i))
    }

    /// Writes an Int result (for prim ops such as `aten::sym_size.int`).
    /// Like ExecuTorch's kernels assigning an `EValue`, the written value
    /// becomes an Int whatever kind the program declared it (scalar
    /// outputs only: `InvalidState` for one not written at run time).
    pub fn set_int(&mut self, i: usize, value: i64) -> Result<()> {
        let v = self.value_index(i)?;
        self.overrides.set(v, ValueKind::Int, value as u64)
    }

    /// Writes a Double result (see [`KernelContext::set_int`]).
    pub fn set_double(&mut self, i: usize, value: f64) -> Result<()> {
        let v = self.value_index(i)?;
        self.overrides.set(v, ValueKind::Double, value.to_bits())
    }

    /// Writes a Bool result (see [`KernelContext::set_int`]).
    pub fn set_bool(&mut self, i: usize, value: bool) -> Result<()> {
        let v = self.value_index(i)?;
        self.overrides.set(v, ValueKind::Bool, value as u64)
    }

    /// Makes tensor argument `out` share argument `src`'s data (views).
    pub fn alias(&mut self, out: usize, src: usize) -> Result<()> {
        let (o, s) = (self.value_index(out)?, self.value_index(src)?);
        // Resolve chains of aliases to the source that owns the bytes.
        let s = match self.overrides.as_ref().get(s) {
            Some(p) if p != UNSET => p as usize,
            _ => s,
        };
        self.overrides.set(o, ValueKind::Tensor, s as u64)
    }

    /// Dtype and current shape of tensor argument `i` (its run-time sizes
    /// when it is bounded dynamic); not its data, so a view's output may be
    /// asked before it is set.
    pub fn tensor_info(&self, i: usize) -> Result<(ScalarType, Shape<'_>)> {
        if let Some(r) = self.call.tensor(self.call.entry(i), self.meta.data) {
            return Ok((r.dtype, r.shape));
        }
        let v = self.value_index(i)?;
        let Value::Tensor(t) = self.values.get(v)?.value()? else {
            return Err(bad_arg("value is not a Tensor", i));
        };
        Ok((t.scalar_type()?, crate::dims::current(&t, self.dims, v)?.0))
    }

    /// Resizes tensor argument `i` to `sizes`, as ExecuTorch's kernels do
    /// with `resize_tensor` before writing an output: a bounded dynamic
    /// tensor takes any sizes of its rank with at most its planned number
    /// of elements, a static one only its own sizes. Anything else is
    /// `InvalidArgument` (`at` = the value index) and changes nothing.
    /// Call it before [`KernelContext::io`], whose views carry the sizes.
    pub fn resize(&mut self, i: usize, sizes: &[i64]) -> Result<()> {
        let v = self.value_index(i)?;
        let Value::Tensor(t) = self.values.get(v)?.value()? else {
            return Err(bad_arg("value is not a Tensor", i));
        };
        crate::dims::resize(self.dims, v, &t, sizes)
    }

    /// Resizes tensor argument `out` to tensor argument `like`'s current
    /// sizes (element-wise ops): [`KernelContext::resize`]. Nothing to do
    /// for a method without bounded dynamic tensors.
    pub fn resize_like(&mut self, out: usize, like: usize) -> Result<()> {
        if !self.has_dynamic_shapes() {
            return Ok(());
        }
        let (_, shape) = self.tensor_info(like)?;
        let mut sizes = [0i64; etch_pte::tensor::MAX_RANK];
        for (slot, s) in sizes.iter_mut().zip(shape.sizes().iter()) {
            *slot = s as i64;
        }
        let rank = shape.rank();
        self.resize(out, sizes.get(..rank).unwrap_or(&[]))
    }

    /// Whether the method has bounded dynamic tensors (else every
    /// [`KernelContext::resize`] of a correct output is a no-op check).
    /// Always false without the `dynamic` feature, so the kernels' resizing
    /// compiles away.
    #[inline]
    pub fn has_dynamic_shapes(&self) -> bool {
        cfg!(feature = "dynamic") && !self.dims.is_empty()
    }

    /// Tensor arguments: `inputs` read-only (`None` where the argument is
    /// Null, e.g. an absent bias), `outputs` writable. Fails if an output is
    /// a constant or overlaps another tensor of the call.
    pub fn io<const N: usize, const M: usize>(
        &mut self,
        inputs: [usize; N],
        outputs: [usize; M],
    ) -> Result<([Option<TensorView<'_>>; N], [TensorViewMut<'_>; M])> {
        // Filled in place and returned as is (see `io_values`).
        let mut views: ([Option<TensorView<'_>>; N], [TensorViewMut<'_>; M]) =
            ([None; N], core::array::from_fn(|_| TensorViewMut::empty()));
        self.io_slices(true, &inputs, &outputs, &mut views.0, &mut views.1)?;
        Ok(views)
    }

    /// Like [`KernelContext::io`], into views the caller owns: inputs
    /// `None` and outputs [`TensorViewMut::empty`] before the call (a Null
    /// input stays `None`). Nothing is copied out of a `Result` (`io`'s
    /// views came back through memory and `?` copied them, 7 words each).
    pub fn io_into<'s, const N: usize, const M: usize>(
        &'s mut self,
        inputs: [usize; N],
        outputs: [usize; M],
        in_views: &mut [Option<TensorView<'s>>; N],
        out_views: &mut [TensorViewMut<'s>; M],
    ) -> Result<()> {
        self.io_slices(true, &inputs, &outputs, in_views, out_views)
    }

    /// Number of tensors in a `Tensor[]` or `Tensor?[]` argument.
    pub fn tensor_list_len(&self, i: usize) -> Result<usize> {
        match self.value(i)? {
            Value::TensorList(items) | Value::OptionalTensorList(items) => Ok(items.len()),
            _ => Err(bad_arg("argument is not a TensorList", i)),
        }
    }

    /// Value index of item `k` of a `Tensor?[]` argument (`None` for an
    /// absent tensor), for [`KernelContext::io_values`].
    pub fn opt_tensor_list_item(&self, i: usize, k: usize) -> Result<Option<usize>> {
        match self.value(i)? {
            Value::OptionalTensorList(items) => match items.get(k)? {
                -1 => Ok(None),
                v => usize::try_from(v)
                    .map(Some)
                    .map_err(|_| bad_arg("bad TensorList item", i)),
            },
            _ => Err(bad_arg("argument is not an OptionalTensorList", i)),
        }
    }

    /// Length of a `float[]` argument.
    pub fn double_list_len(&self, i: usize) -> Result<usize> {
        match self.value(i)? {
            Value::DoubleList(items) => Ok(items.len()),
            _ => Err(bad_arg("argument is not a DoubleList", i)),
        }
    }

    /// Item `k` of a `float[]` argument.
    pub fn double_list_item(&self, i: usize, k: usize) -> Result<f64> {
        match self.value(i)? {
            Value::DoubleList(items) => items.get(k),
            _ => Err(bad_arg("argument is not a DoubleList", i)),
        }
    }

    /// Value index of tensor `k` of a `Tensor[]` argument, for
    /// [`KernelContext::io_values`].
    pub fn tensor_list_item(&self, i: usize, k: usize) -> Result<usize> {
        match self.value(i)? {
            Value::TensorList(items) => {
                usize::try_from(items.get(k)?).map_err(|_| bad_arg("bad TensorList item", i))
            }
            _ => Err(bad_arg("argument is not a TensorList", i)),
        }
    }

    /// Like [`KernelContext::io`], by value index (list items, delegates);
    /// `None` inputs stay `None`.
    pub fn io_values<const N: usize, const M: usize>(
        &mut self,
        inputs: [Option<usize>; N],
        outputs: [usize; M],
    ) -> Result<([Option<TensorView<'_>>; N], [TensorViewMut<'_>; M])> {
        // Filled in place and returned as is (one copy of the views on
        // the stack, not two: each view is 7 words on 32-bit targets).
        let mut views: ([Option<TensorView<'_>>; N], [TensorViewMut<'_>; M]) =
            ([None; N], core::array::from_fn(|_| TensorViewMut::empty()));
        let inputs = inputs.map(|v| v.unwrap_or(usize::MAX));
        self.io_slices(false, &inputs, &outputs, &mut views.0, &mut views.1)?;
        Ok(views)
    }

    // The work of `io`, `io_into` (`by_arg`: argument positions) and
    // `io_values` (value indices, `usize::MAX` for None) over slices: one
    // copy in flash for every (inputs, outputs) arity the kernels use. A
    // call of one output whose tensors load decoded takes the short path
    // (`io_one_output`), any other the pieces (`io_pieces`). Each tensor
    // is resolved straight into its view (outputs first, they are carved
    // out of the planned buffers before inputs may read what is left): no
    // array of intermediate descriptions on the stack. Inline: only the
    // choice of path, which the arities and `by_arg` fold to one call.
    #[inline(always)]
    fn io_slices<'s>(
        &'s mut self,
        by_arg: bool,
        inputs: &[usize],
        outputs: &[usize],
        in_views: &mut [Option<TensorView<'s>>],
        out_views: &mut [TensorViewMut<'s>],
    ) -> Result<()> {
        match *outputs {
            [out] if by_arg => self.io_one_output(inputs, out, in_views, out_views),
            _ => self.io_pieces(by_arg, inputs, outputs, in_views, out_views),
        }
    }

    /// [`KernelContext::io_slices`] through pieces of the planned buffers:
    /// any number of outputs, tensors not decoded at load, value indices.
    /// Out of line: its frame (the pieces) is on the stack only on this
    /// path.
    #[inline(never)]
    fn io_pieces<'s>(
        &'s mut self,
        by_arg: bool,
        inputs: &[usize],
        outputs: &[usize],
        in_views: &mut [Option<TensorView<'s>>],
        out_views: &mut [TensorViewMut<'s>],
    ) -> Result<()> {
        if outputs.len() > MAX_OUTPUTS {
            return Err(bad_arg("too many outputs", outputs.len()));
        }
        let at = Where {
            meta: self.meta,
            values: self.values,
            args: self.args,
            call: self.call,
            overrides: self.overrides.as_ref(),
            dims: self.dims,
        };
        let mut pieces = Pieces::empty();
        self.memory.pieces(&mut pieces);
        // One loop, outputs first: one copy of the (inlined) resolution.
        let n_out = outputs.len();
        for k in 0..n_out + inputs.len() {
            let a = if k < n_out {
                outputs.get(k)
            } else {
                inputs.get(k - n_out)
            };
            let Some(&a) = a else {
                break;
            };
            let r = at.resolve(by_arg, a)?;
            if k < n_out {
                let r = r.ok_or(bad_arg("value is not a Tensor", a))?;
                let Loc::Planned { memory, offset } = r.loc else {
                    return Err(bad_arg("output is a constant", a));
                };
                let data = pieces.take(memory, offset, r.nbytes)?;
                if let Some(view) = out_views.get_mut(k) {
                    *view = TensorViewMut {
                        dtype: r.dtype,
                        shape: r.shape,
                        data,
                    };
                }
            } else if let Some(r) = r {
                let data = match r.loc {
                    Loc::Constant(d) => d,
                    Loc::Planned { memory, offset } => pieces.get(memory, offset, r.nbytes)?,
                };
                if let Some(view) = in_views.get_mut(k - n_out) {
                    *view = Some(TensorView {
                        dtype: r.dtype,
                        shape: r.shape,
                        data,
                    });
                }
            }
        }
        Ok(())
    }
}

impl<'c, 'a: 'c> KernelContext<'c, 'a> {
    /// `io` for one output argument (`out`): when it is a non-empty planned
    /// tensor decoded at load and every input argument None or a tensor
    /// decoded at load, each a constant or in the output's buffer, that
    /// buffer is split around the output once and each planned input read
    /// from the bytes before or after it (one that overlaps it is an error,
    /// as in the general path), constants in place: no pieces to set up or
    /// search. Any other call goes to [`KernelContext::io_pieces`] (decided
    /// before the buffers are borrowed).
    #[inline(never)]
    fn io_one_output<'s>(
        &'s mut self,
        inputs: &[usize],
        out: usize,
        in_views: &mut [Option<TensorView<'s>>],
        out_views: &mut [TensorViewMut<'s>],
    ) -> Result<()> {
        let (call, file) = (self.call, self.meta.data);
        let fast = match call.tensor(call.entry(out), file) {
            Some(r) if r.nbytes > 0 => match r.loc {
                Loc::Planned { memory, offset } => {
                    let m = memory as u32 + 1;
                    let same = |&a: &usize| {
                        let e = call.entry(a);
                        e & 15 == calls::NULL
                            || matches!(call.tensor_memory(e), Some(x) if x == 0 || x == m)
                    };
                    inputs.iter().all(same).then_some((r, memory, offset))
                }
                Loc::Constant(_) => None,
            },
            _ => None,
        };
        let Some((r, memory, offset)) = fast else {
            return self.io_pieces(true, inputs, &[out], in_views, out_views);
        };
        let (before, data, after) = self
            .memory
            .split(memory, offset, r.nbytes)
            .ok_or_else(overlap)?;
        let out_end = offset + r.nbytes;
        if let Some(view) = out_views.first_mut() {
            *view = TensorViewMut {
                dtype: r.dtype,
                shape: r.shape,
                data,
            };
        }
        for (&a, view) in inputs.iter().zip(in_views.iter_mut()) {
            let e = call.entry(a);
            if e & 15 == calls::NULL {
                continue;
            }
            let r = call
                .tensor(e, file)
                .ok_or(bad_arg("value is not a Tensor", a))?;
            let data = match r.loc {
                Loc::Constant(d) => Some(d),
                Loc::Planned { .. } if r.nbytes == 0 => Some(bytemuck::cast_slice::<u128, u8>(&[])),
                Loc::Planned {
                    memory: m,
                    offset: o,
                } if m == memory => match o.checked_add(r.nbytes) {
                    Some(end) if end <= offset => before.get(o..end),
                    Some(end) if o >= out_end => after.get(o - out_end..end - out_end),
                    _ => None,
                },
                Loc::Planned { .. } => None,
            };
            *view = Some(TensorView {
                dtype: r.dtype,
                shape: r.shape,
                data: data.ok_or_else(overlap)?,
            });
        }
        Ok(())
    }
}

/// The context's fields `io` resolves tensors with, copied out so that it
/// can resolve while it holds the planned buffers.
struct Where<'c, 'a> {
    meta: &'c MethodMeta<'a>,
    values: Vector<'a, EValue<'a>>,
    args: Vector<'a, i32>,
    call: Call<'c>,
    overrides: Overrides<'c>,
    dims: &'c [u8],
}

impl<'c, 'a: 'c> Where<'c, 'a> {
    /// Argument `a` (`by_arg`) or value `a` (`usize::MAX`: None) as a
    /// tensor, `None` when it is None: from the call's table when load
    /// decoded it, else from the program.
    #[inline(always)]
    fn resolve(&self, by_arg: bool, a: usize) -> Result<Option<Resolved<'c>>> {
        if by_arg {
            let e = self.call.entry(a);
            if let Some(r) = self.call.tensor(e, self.meta.data) {
                return Ok(Some(r));
            }
            if e & 15 == calls::NULL {
                return Ok(None);
            }
        }
        self.resolve_slow(by_arg, a)
    }

    /// [`Where::resolve`] from the program, out of line: its frame is on
    /// the stack only when an argument was not decoded.
    #[inline(never)]
    fn resolve_slow(&self, by_arg: bool, a: usize) -> Result<Option<Resolved<'c>>> {
        let v = if by_arg {
            let v = usize::try_from(self.args.get(a)?)
                .map_err(|_| bad_arg("negative value index", a))?;
            if self.values.get(v)?.kind()? == ValueKind::Null {
                return Ok(None);
            }
            v
        } else if a == usize::MAX {
            return Ok(None);
        } else {
            a
        };
        resolve_tensor(&self.meta.file(), self.values, self.overrides, self.dims, v).map(Some)
    }
}

/// Unwraps a required tensor input from [`KernelContext::io`].
pub fn required<'d>(t: Option<TensorView<'d>>, arg: usize) -> Result<TensorView<'d>> {
    t.ok_or(bad_arg("required tensor argument is None", arg))
}

// The one-output path needs the tables (`decoded-calls`).
#[cfg(all(test, feature = "decoded-calls"))]
mod tests;
