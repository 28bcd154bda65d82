//! Host-side plumbing shared by the commands: aligned buffers, loading a
//! method with every kernel, and converting between logical (`.npy`) order and
//! a tensor's physical dim order.

use etch_runtime::{Method, MethodMeta, Program, Shape, Verification};

/// A zeroed, 16-byte aligned byte buffer.
pub struct Aligned(Vec<u128>, usize);

impl Aligned {
    pub fn new(len: usize) -> Self {
        Aligned(vec![0u128; len.div_ceil(16)], len)
    }
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let mut a = Aligned::new(bytes.len());
        a.bytes_mut().copy_from_slice(bytes);
        a
    }
    pub fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.0)[..self.1]
    }
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.0)[..self.1]
    }
}

pub fn load_program<'a>(path: &str, bytes: &'a Aligned) -> Result<Program<'a>, String> {
    Program::from_bytes(bytes.bytes(), Verification::InternalConsistency)
        .map_err(|e| crate::describe(path, e))
}

/// Memory for one method, sized from its meta.
pub struct MethodMemory {
    pub state: Vec<u8>,
    pub planned: Vec<Aligned>,
}

impl MethodMemory {
    pub fn for_meta(meta: &MethodMeta<'_>) -> etch_runtime::Result<Self> {
        let mut planned = Vec::new();
        for i in 0..meta.num_memory_planned_buffers()? {
            planned.push(Aligned::new(meta.memory_planned_buffer_size(i)?));
        }
        Ok(MethodMemory {
            state: vec![0; meta.method_state_bytes(etch_kernels::KERNELS)?],
            planned,
        })
    }
}

/// Loads `meta` with every kernel etch has; on `OperatorMissing` the message
/// lists the missing operators by name.
pub fn load_method<'a, 'm>(
    meta: &MethodMeta<'a>,
    state: &'m mut [u8],
    planned: &'m mut [&'m mut [u8]],
) -> Result<Method<'a, 'm>, String> {
    Method::load(meta, state, planned, etch_kernels::KERNELS, &[]).map_err(|e| {
        let mut msg = e.to_string();
        if e.code == etch_runtime::ErrorCode::InvalidProgram && e.what.contains("schema") {
            if let Ok((n, o)) = meta.operator_of_instruction(e.at as usize) {
                msg = format!("{msg}; operator: {n}.{o}");
            }
        }
        if e.code == etch_runtime::ErrorCode::NotFound {
            let ids: Vec<String> = meta
                .plan()
                .delegates()
                .map(|d| {
                    d.iter()
                        .filter_map(|d| d.ok()?.id().ok().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            msg = format!("{msg}; etch has no backend for: {}", ids.join(", "));
        }
        if e.code == etch_runtime::ErrorCode::OperatorMissing {
            let mut names = Vec::new();
            // One pass over the instructions: scratch for every operator.
            let mut used = vec![0u8; meta.missing_operator_scratch_bytes().unwrap_or(0).max(1)];
            let _ =
                meta.for_each_missing_operator_with(etch_kernels::KERNELS, &mut used, |n, o| {
                    names.push(if o.is_empty() {
                        n.to_string()
                    } else {
                        format!("{n}.{o}")
                    })
                });
            msg = format!("{msg}; missing: {}", names.join(", "));
        }
        msg
    })
}

/// Visits every element's physical index (in elements) in logical C order.
fn for_each_physical(shape: &Shape, mut f: impl FnMut(usize)) {
    let sizes = shape.sizes();
    let strides = shape.strides();
    let n = shape.numel();
    let mut idx = vec![0usize; sizes.len()];
    for _ in 0..n {
        f(idx.iter().zip(strides.iter()).map(|(i, s)| i * s).sum());
        for d in (0..sizes.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape.size(d as isize) {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Logical C-order bytes → the tensor's physical layout.
pub fn to_physical(logical: &[u8], shape: &Shape, elem: usize) -> Vec<u8> {
    let mut out = vec![0u8; logical.len()];
    let mut k = 0;
    for_each_physical(shape, |p| {
        out[p * elem..(p + 1) * elem].copy_from_slice(&logical[k * elem..(k + 1) * elem]);
        k += 1;
    });
    out
}

/// The tensor's physical layout → logical C-order bytes.
pub fn to_logical(physical: &[u8], shape: &Shape, elem: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(physical.len());
    for_each_physical(shape, |p| {
        out.extend_from_slice(&physical[p * elem..(p + 1) * elem])
    });
    out
}
