//! Kernels and the registry that resolves operators to them at load time.
//!
//! No static initializers and no global table: the caller passes the kernels
//! it selected (usually `etch_kernels::KERNELS`, a `const` slice whose entries
//! are compiled in per cargo feature), so the registry lives in flash and has
//! exactly as many entries as kernels were selected.

use crate::context::KernelContext;
use crate::Result;
use etch_pte::flatbuffer::same_bytes;

/// The EValue kind a kernel expects at one position of its argument list.
/// Checked for every `KernelCall` when the method loads, so an operator whose
/// schema drifted between ExecuTorch releases fails with `InvalidProgram`
/// before anything runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ArgKind {
    Tensor,
    /// `Tensor?`: a tensor or Null.
    OptTensor,
    Int,
    OptInt,
    /// `float` (always a Double EValue).
    Double,
    OptDouble,
    Bool,
    /// `bool?`.
    OptBool,
    /// `int[]` / `SymInt[]`.
    IntList,
    OptIntList,
    /// `ScalarType`: an Int holding the dtype code.
    ScalarType,
    OptScalarType,
    /// `Scalar`: Int, Double or Bool.
    Scalar,
    OptScalar,
    TensorList,
    /// `Tensor?[]`.
    OptTensorList,
    DoubleList,
    /// `float[]?`.
    OptDoubleList,
    BoolList,
    String,
    /// `str?`.
    OptString,
}

impl ArgKind {
    /// Whether a value of `kind` is acceptable here.
    pub fn accepts(self, kind: etch_pte::ValueKind) -> bool {
        // One bit per accepted `ValueKind` tag, one mask per `ArgKind` (in
        // declaration order): a load and a shift, not a 100-byte match.
        const fn bits(kinds: &[etch_pte::ValueKind]) -> u16 {
            let mut m = 0;
            let mut i = 0;
            while i < kinds.len() {
                m |= 1 << kinds[i] as u8;
                i += 1;
            }
            m
        }
        use etch_pte::ValueKind as V;
        const N: u16 = bits(&[V::Null]);
        const ACCEPTS: [u16; 21] = [
            bits(&[V::Tensor]),                      // Tensor
            bits(&[V::Tensor]) | N,                  // OptTensor
            bits(&[V::Int]),                         // Int
            bits(&[V::Int]) | N,                     // OptInt
            bits(&[V::Double]),                      // Double
            bits(&[V::Double]) | N,                  // OptDouble
            bits(&[V::Bool]),                        // Bool
            bits(&[V::Bool]) | N,                    // OptBool
            bits(&[V::IntList]),                     // IntList
            bits(&[V::IntList]) | N,                 // OptIntList
            bits(&[V::Int]),                         // ScalarType
            bits(&[V::Int]) | N,                     // OptScalarType
            bits(&[V::Int, V::Double, V::Bool]),     // Scalar
            bits(&[V::Int, V::Double, V::Bool]) | N, // OptScalar
            bits(&[V::TensorList]),                  // TensorList
            bits(&[V::OptionalTensorList]),          // OptTensorList
            bits(&[V::DoubleList]),                  // DoubleList
            bits(&[V::DoubleList]) | N,              // OptDoubleList
            bits(&[V::BoolList]),                    // BoolList
            bits(&[V::String]),                      // String
            bits(&[V::String]) | N,                  // OptString
        ];
        ACCEPTS
            .get(self as usize)
            .is_some_and(|m| m >> (kind as u8) & 1 != 0)
    }
}

/// A kernel: runs one instruction, reading its arguments from the context.
pub type KernelFn = fn(&mut KernelContext<'_, '_>) -> Result<()>;

/// One registry entry. Declare one with [`op!`](crate::op) from the
/// operator's ExecuTorch schema line rather than by hand.
#[derive(Clone, Copy)]
pub struct Kernel {
    /// `namespace::op.overload`, e.g. `aten::add.out` (no dot when the
    /// overload is empty), as ExecuTorch builds operator names.
    pub name: &'static str,
    /// Kinds of the argument list: the schema arguments in order (including
    /// `out`), then the return value.
    pub args: &'static [ArgKind],
    pub run: KernelFn,
    /// The schema line `op!` was given, with the `schema-text` feature (host
    /// tools: `etch inspect`, docs/operators.md); empty otherwise.
    pub schema: &'static str,
    /// Bytes of scratch the kernel uses during one call (its packed weights,
    /// accumulator rows, ...), declared with `op!(schema, run, scratch = N)`:
    /// the method state reserves the largest over the kernels a method calls
    /// (`MethodMeta::method_state_bytes`), and a call gets it, 8-byte
    /// aligned, from [`KernelContext::take_scratch`]. Keeps kernel buffers
    /// off the stack.
    pub scratch: u32,
}

impl core::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name)
    }
}

impl Kernel {
    /// Whether this kernel implements operator `name` with `overload`.
    pub fn matches(&self, name: &str, overload: &str) -> bool {
        self.matches_bytes(name.as_bytes(), overload.as_bytes())
    }

    /// [`Kernel::matches`] on the raw name bytes of the program.
    pub fn matches_bytes(&self, n: &[u8], o: &[u8]) -> bool {
        // Byte loops (`same_bytes`), not `==`: no `memcmp` in firmware.
        let full = self.name.as_bytes();
        if o.is_empty() {
            return same_bytes(full, n);
        }
        full.len() == n.len() + 1 + o.len()
            && same_bytes(full.get(..n.len()).unwrap_or(&[]), n)
            && full.get(n.len()) == Some(&b'.')
            && same_bytes(full.get(n.len() + 1..).unwrap_or(&[]), o)
    }
}

/// Finds the kernel for an operator.
pub fn find(kernels: &[Kernel], name: &str, overload: &str) -> Option<usize> {
    find_bytes(kernels, name.as_bytes(), overload.as_bytes())
}

/// [`find`] on the raw name bytes of the program (what the loader uses).
pub fn find_bytes(kernels: &[Kernel], name: &[u8], overload: &[u8]) -> Option<usize> {
    kernels.iter().position(|k| k.matches_bytes(name, overload))
}

fn unreachable_kernel(_: &mut KernelContext<'_, '_>) -> Result<()> {
    Err(crate::Error::new(
        crate::ErrorCode::OperatorMissing,
        "empty registry slot",
        0,
    ))
}

/// A registry with a compile-time capacity `N`: the selected kernels plus
/// room for the application's own ([`Registry::register`]), e.g. for
/// operators etch does not ship (`CONFIG_ETCH_KERNEL_REGISTRY_SIZE` on
/// Zephyr). The default is to pass the selected `&[Kernel]` directly:
/// exactly sized, in flash.
///
/// ```
/// use etch_runtime::{op, ErrorCode, Kernel, Registry};
/// const MINE: Kernel = op!("my::op.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", |_ctx| Ok(()));
/// let mut registry = Registry::<2>::from_slice(&[]).unwrap();
/// registry.register(MINE).unwrap();
/// assert_eq!(registry.register(MINE).unwrap_err().code, ErrorCode::RegistrationAlreadyRegistered);
/// assert_eq!(registry.kernels().len(), 1); // pass registry.kernels() to Method::load
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Registry<const N: usize> {
    kernels: [Kernel; N],
    len: usize,
}

impl<const N: usize> Registry<N> {
    const EMPTY: Kernel = Kernel {
        name: "",
        args: &[],
        run: unreachable_kernel,
        schema: "",
        scratch: 0,
    };

    /// Copies `kernels` into a registry of capacity `N`; `None` when they do
    /// not fit. In a `const` this turns a too-small capacity into a build error.
    pub const fn from_slice(kernels: &[Kernel]) -> Option<Self> {
        if kernels.len() > N {
            return None;
        }
        let mut out = [Self::EMPTY; N];
        let mut i = 0;
        while i < kernels.len() {
            out[i] = kernels[i];
            i += 1;
        }
        Some(Registry {
            kernels: out,
            len: kernels.len(),
        })
    }

    /// Adds a kernel, as ExecuTorch's `register_kernels`: past the capacity
    /// `RegistrationExceedingMaxKernels` (0x15), a name already present
    /// `RegistrationAlreadyRegistered` (0x16); the registry is unchanged
    /// then. Its argument kinds are checked against every call of the
    /// operator when a method loads, as the built-in kernels' are.
    pub fn register(&mut self, kernel: Kernel) -> crate::Result<()> {
        use crate::{Error, ErrorCode};
        if self.len >= N {
            return Err(Error::new(
                ErrorCode::RegistrationExceedingMaxKernels,
                "kernel registry full",
                N as u32,
            ));
        };
        if let Some(i) = self.kernels().iter().position(|k| k.name == kernel.name) {
            return Err(Error::new(
                ErrorCode::RegistrationAlreadyRegistered,
                "operator already registered",
                i as u32,
            ));
        }
        if let Some(slot) = self.kernels.get_mut(self.len) {
            *slot = kernel;
            self.len += 1;
        }
        Ok(())
    }

    /// Number of kernels registered.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The registered kernels.
    pub fn kernels(&self) -> &[Kernel] {
        self.kernels.get(..self.len).unwrap_or(&[])
    }

    pub const fn capacity(&self) -> usize {
        N
    }
}

#[cfg(test)]
mod tests {
    use super::ArgKind as A;
    use etch_pte::ValueKind as V;

    /// The rule `accepts` encodes as bit masks, written out as a match.
    fn reference(a: A, kind: V) -> bool {
        match a {
            A::Tensor => kind == V::Tensor,
            A::OptTensor => matches!(kind, V::Tensor | V::Null),
            A::Int | A::ScalarType => kind == V::Int,
            A::OptInt | A::OptScalarType => matches!(kind, V::Int | V::Null),
            A::Double => kind == V::Double,
            A::OptDouble => matches!(kind, V::Double | V::Null),
            A::Bool => kind == V::Bool,
            A::OptBool => matches!(kind, V::Bool | V::Null),
            A::IntList => kind == V::IntList,
            A::OptIntList => matches!(kind, V::IntList | V::Null),
            A::Scalar => matches!(kind, V::Int | V::Double | V::Bool),
            A::OptScalar => matches!(kind, V::Int | V::Double | V::Bool | V::Null),
            A::TensorList => kind == V::TensorList,
            A::OptTensorList => kind == V::OptionalTensorList,
            A::DoubleList => kind == V::DoubleList,
            A::OptDoubleList => matches!(kind, V::DoubleList | V::Null),
            A::BoolList => kind == V::BoolList,
            A::String => kind == V::String,
            A::OptString => matches!(kind, V::String | V::Null),
        }
    }

    #[test]
    fn accepts_matches_the_rule_for_every_pair() {
        let all = [
            A::Tensor,
            A::OptTensor,
            A::Int,
            A::OptInt,
            A::Double,
            A::OptDouble,
            A::Bool,
            A::OptBool,
            A::IntList,
            A::OptIntList,
            A::ScalarType,
            A::OptScalarType,
            A::Scalar,
            A::OptScalar,
            A::TensorList,
            A::OptTensorList,
            A::DoubleList,
            A::OptDoubleList,
            A::BoolList,
            A::String,
            A::OptString,
        ];
        let mut accepted = 0;
        for a in all {
            for kind in V::ALL {
                assert_eq!(a.accepts(kind), reference(a, kind), "{a:?} {kind:?}");
                accepted += a.accepts(kind) as u32;
            }
        }
        // 11 one-kind rules, 8 optional ones (the kind or Null), Scalar 3,
        // OptScalar 4.
        assert_eq!(accepted, 11 + 2 * 8 + 3 + 4);
    }
}
