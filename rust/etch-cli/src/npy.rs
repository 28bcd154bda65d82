//! `.npy` / `.npz` files through the `npyz` and `zip` crates, as untyped
//! tensors: an ExecuTorch dtype, a shape and little-endian bytes in C order.
//!
//! Bounded memory (a hostile file must not exhaust the host): every reader takes a [`Cap`], what the program
//! can hold, and refuses a file, an archive member or an array over it
//! before allocating: the file's length is checked before it is read, an
//! array's declared size (shape product times item size, checked) before
//! `npyz` sees the header (it multiplies the shape unchecked), and an `.npz`
//! member is inflated through a `take` of its share of the cap, whatever its
//! header claims.

use std::io::{Cursor, Read};

use etch_pte::ScalarType;
use npyz::{DType, Deserialize, NpyFile, Serialize, TypeStr, WriterBuilder};

pub struct Npy {
    pub dtype: ScalarType,
    pub shape: Vec<usize>,
    /// Elements in C (logical) order, little-endian.
    pub data: Vec<u8>,
}

/// Calls `$body` with `$t` bound to the Rust element type of `$dtype`
/// (`None` for dtypes .npy cannot hold).
macro_rules! with_elem {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            ScalarType::FLOAT => {
                type $t = f32;
                Some($body)
            }
            ScalarType::DOUBLE => {
                type $t = f64;
                Some($body)
            }
            ScalarType::CHAR => {
                type $t = i8;
                Some($body)
            }
            ScalarType::BYTE => {
                type $t = u8;
                Some($body)
            }
            ScalarType::SHORT => {
                type $t = i16;
                Some($body)
            }
            ScalarType::INT => {
                type $t = i32;
                Some($body)
            }
            ScalarType::LONG => {
                type $t = i64;
                Some($body)
            }
            ScalarType::BOOL => {
                type $t = bool;
                Some($body)
            }
            _ => None,
        }
    };
}

/// Little-endian bytes of one element, and back.
trait Le: Sized + Copy {
    fn put(self, out: &mut Vec<u8>);
    fn take(b: &[u8]) -> Self;
}
macro_rules! le {
    ($($t:ty),*) => {$(
        impl Le for $t {
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes())
            }
            fn take(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().unwrap_or_default())
            }
        }
    )*};
}
le!(f32, f64, i8, u8, i16, i32, i64);
impl Le for bool {
    fn put(self, out: &mut Vec<u8>) {
        out.push(self as u8)
    }
    fn take(b: &[u8]) -> Self {
        b.first().is_some_and(|&x| x != 0)
    }
}

/// The ExecuTorch dtype of a .npy type string (either byte order is read;
/// npyz swaps big-endian data).
fn dtype_of(t: &TypeStr) -> Option<ScalarType> {
    let s = t.to_string();
    Some(match s.get(1..)? {
        "f4" => ScalarType::FLOAT,
        "f8" => ScalarType::DOUBLE,
        "i1" => ScalarType::CHAR,
        "u1" => ScalarType::BYTE,
        "i2" => ScalarType::SHORT,
        "i4" => ScalarType::INT,
        "i8" => ScalarType::LONG,
        "b1" => ScalarType::BOOL,
        _ => return None,
    })
}

fn read_elems<T: Deserialize + Le, R: Read>(file: NpyFile<R>) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for x in file.data::<T>().map_err(|e| e.to_string())? {
        x.map_err(|e| e.to_string())?.put(&mut out);
    }
    Ok(out)
}

fn from_file<R: Read>(file: NpyFile<R>) -> Result<Npy, String> {
    let DType::Plain(t) = file.dtype() else {
        return Err("structured arrays are not supported".into());
    };
    let dtype = dtype_of(&t).ok_or_else(|| format!("unsupported dtype {t}"))?;
    if file.order() == npyz::Order::Fortran {
        return Err("Fortran-order arrays are not supported".into());
    }
    let shape = file.shape().iter().map(|&s| s as usize).collect();
    let data = with_elem!(dtype, T => read_elems::<T, R>(file)).ok_or("unsupported dtype")??;
    Ok(Npy { dtype, shape, data })
}

/// Most bytes a reader may hold: `array` for one array's data, `total` for
/// all the arrays of one `.npz` (or of a trace directory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cap {
    pub array: usize,
    pub total: usize,
}

impl Cap {
    /// One array of at most `bytes`.
    #[cfg(test)]
    pub fn one(bytes: usize) -> Cap {
        Cap {
            array: bytes,
            total: bytes,
        }
    }

    /// What a program's tensors can hold: any one array at most its largest
    /// tensor, all of them at most twice the sum of its tensors (a graph
    /// node's output and the `alloc` node that made its buffer are both in
    /// an `.npz` of intermediates).
    pub fn of_program(file: &[u8], method: &str) -> Result<Cap, String> {
        use etch_pte::{PteFile, Value};
        let err = |e: etch_pte::Error| e.to_string();
        let file = PteFile::new_checked(file).map_err(err)?;
        let plan = file.plan(method).map_err(err)?;
        let (mut array, mut total) = (0usize, 0usize);
        for v in plan.values().map_err(err)?.iter() {
            if let Value::Tensor(t) = v.map_err(err)?.value().map_err(err)? {
                let n = etch_pte::tensor::nbytes(&t).map_err(err)?;
                array = array.max(n);
                total = total.saturating_add(n);
            }
        }
        Ok(Cap {
            array,
            total: total.saturating_mul(2),
        })
    }
}

/// Header bytes allowed beyond an array's data: the `.npy` header (format
/// 1.0 headers are at most 64 KiB; numpy writes under 200 bytes).
const HEADER_SLACK: usize = 1 << 16;

/// The bytes of `path`, refused before reading if the file is over `max`.
fn read_capped(path: &str, max: usize) -> Result<Vec<u8>, String> {
    let len = std::fs::metadata(path)
        .map_err(|e| format!("{path}: {e}"))?
        .len();
    if len > max as u64 {
        return Err(format!(
            "{path}: {len} bytes, more than the {max} the program can hold"
        ));
    }
    crate::read_file(path)
}

/// The declared data size of a `.npy`: shape product times item size, both
/// checked, read from the header without `npyz` (which multiplies the shape
/// unchecked: a panic in overflow-checked builds). Also checks the data is
/// present. Only the plain dtypes etch reads are sized; others are errors.
fn declared_bytes(bytes: &[u8]) -> Result<usize, String> {
    let bad = |what: &str| format!("bad .npy header: {what}");
    if bytes.get(..6) != Some(b"\x93NUMPY") {
        return Err(bad("no magic"));
    }
    let (len, at) = match bytes.get(6) {
        Some(1) => (
            bytes
                .get(8..10)
                .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize),
            10,
        ),
        Some(2 | 3) => (
            bytes
                .get(8..12)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize),
            12,
        ),
        _ => return Err(bad("unknown version")),
    };
    let end = len
        .and_then(|l| l.checked_add(at))
        .ok_or_else(|| bad("truncated"))?;
    let header = bytes.get(at..end).ok_or_else(|| bad("truncated"))?;
    let header = std::str::from_utf8(header).map_err(|_| bad("not text"))?;
    let field = |key: &str| {
        header
            .find(key)
            .map(|i| header[i + key.len()..].trim_start_matches([' ', ':']))
    };
    let descr = field("'descr'")
        .and_then(|d| d.strip_prefix('\''))
        .and_then(|d| d.split('\'').next())
        .ok_or_else(|| bad("no descr"))?;
    let item: usize = descr
        .get(2..)
        .and_then(|n| n.parse().ok())
        .filter(|_| descr.len() >= 3)
        .ok_or_else(|| format!("unsupported dtype {descr}"))?;
    let shape = field("'shape'")
        .and_then(|s| s.strip_prefix('('))
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("no shape"))?;
    let mut n = item;
    for dim in shape.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let dim: usize = dim.parse().map_err(|_| bad("shape"))?;
        n = n
            .checked_mul(dim)
            .ok_or_else(|| bad("shape product overflows"))?;
    }
    if bytes.len() - end < n {
        return Err(format!(
            "{n} bytes of data declared, {} present",
            bytes.len() - end
        ));
    }
    Ok(n)
}

/// One `.npy` from memory, refused if its data is over `max` bytes.
pub fn parse(bytes: &[u8], max: usize) -> Result<Npy, String> {
    let n = declared_bytes(bytes)?;
    if n > max {
        return Err(format!(
            "{n} bytes of data, more than the {max} the program can hold"
        ));
    }
    from_file(NpyFile::new(bytes).map_err(|e| e.to_string())?)
}

/// One `.npy` file of at most `max` bytes of data.
pub fn read(path: &str, max: usize) -> Result<Npy, String> {
    let bytes = read_capped(path, max.saturating_add(HEADER_SLACK))?;
    parse(&bytes, max).map_err(|e| format!("{path}: {e}"))
}

/// Every array of a `.npz` (stored or deflated), in archive order, within
/// `cap`: each member is inflated through a `take` of what is left of
/// `cap.total` (or `cap.array`), so a member that inflates past it is
/// refused after at most that many bytes.
pub fn read_npz(path: &str, cap: Cap) -> Result<Vec<(String, Npy)>, String> {
    let err = |e: &dyn std::fmt::Display| format!("{path}: {e}");
    // A member is at least its data plus its name and headers; the archive
    // is refused if it could not fit within the total anyway.
    let bytes = read_capped(
        path,
        cap.total.saturating_add(HEADER_SLACK).saturating_mul(2),
    )?;
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| err(&e))?;
    let mut out = Vec::new();
    let mut left = cap.total;
    for i in 0..zip.len() {
        let f = zip.by_index(i).map_err(|e| err(&e))?;
        let name = f.name().to_string();
        let Some(array) = name.strip_suffix(".npy") else {
            continue;
        };
        let max = cap.array.min(left);
        let limit = max.saturating_add(HEADER_SLACK);
        let mut buf = Vec::new();
        f.take(limit as u64 + 1)
            .read_to_end(&mut buf)
            .map_err(|e| err(&e))?;
        if buf.len() > limit {
            return Err(format!(
                "{path}: {name}: inflates past the {max} bytes the program can hold"
            ));
        }
        let npy = parse(&buf, max).map_err(|e| format!("{path}: {name}: {e}"))?;
        left -= npy.data.len().min(left);
        out.push((array.to_string(), npy));
    }
    Ok(out)
}

fn write_elems<T: Serialize + Le>(npy: &Npy, t: &str) -> Result<Vec<u8>, String> {
    let size = npy.dtype.element_size().unwrap_or(1);
    let type_str: TypeStr = t.parse().map_err(|e| format!("{e}"))?;
    let shape: Vec<u64> = npy.shape.iter().map(|&s| s as u64).collect();
    let mut out = Vec::new();
    let mut w = WriteOptions::<T>::new()
        .dtype(DType::Plain(type_str))
        .shape(&shape)
        .writer(&mut out)
        .begin_nd()
        .map_err(|e| e.to_string())?;
    w.extend(npy.data.chunks_exact(size).map(T::take))
        .map_err(|e| e.to_string())?;
    w.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

use npyz::WriteOptions;

pub fn to_bytes(npy: &Npy) -> Result<Vec<u8>, String> {
    let t = match npy.dtype {
        ScalarType::CHAR | ScalarType::BYTE | ScalarType::BOOL => "|",
        _ => "<",
    };
    let code = match npy.dtype {
        ScalarType::FLOAT => "f4",
        ScalarType::DOUBLE => "f8",
        ScalarType::CHAR => "i1",
        ScalarType::BYTE => "u1",
        ScalarType::SHORT => "i2",
        ScalarType::INT => "i4",
        ScalarType::LONG => "i8",
        ScalarType::BOOL => "b1",
        _ => return Err("dtype has no .npy equivalent".into()),
    };
    let descr = format!("{t}{code}");
    with_elem!(npy.dtype, T => write_elems::<T>(npy, &descr))
        .ok_or("dtype has no .npy equivalent")?
}

pub fn write(path: &str, npy: &Npy) -> Result<(), String> {
    std::fs::write(path, to_bytes(npy)?).map_err(|e| format!("{path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let npy = Npy {
            dtype: ScalarType::FLOAT,
            shape: vec![1, 3],
            data: [1.0f32, -2.5, 3.0]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
        };
        let bytes = to_bytes(&npy).unwrap();
        assert_eq!(bytes.len() % 64, 12);
        let back = parse(&bytes, 12).unwrap();
        assert_eq!(
            (back.dtype, back.shape, back.data),
            (npy.dtype, npy.shape, npy.data)
        );
    }

    #[test]
    fn reads_the_fixture_intermediates() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/tiny_cm_m0.intermediates.npz"
        );
        let arrays = read_npz(path, Cap::one(1 << 20)).unwrap();
        let got: Vec<(usize, ScalarType, Vec<usize>)> = arrays
            .iter()
            .map(|(n, a)| (n.len(), a.dtype, a.shape.clone()))
            .map(|(_, d, s)| (0, d, s))
            .collect();
        assert_eq!(
            got,
            [
                (0, ScalarType::CHAR, vec![1, 16]),
                (0, ScalarType::CHAR, vec![1, 32]),
                (0, ScalarType::CHAR, vec![1, 8]),
                (0, ScalarType::FLOAT, vec![1, 8]),
            ]
        );
        assert!(arrays[1]
            .0
            .starts_with("001_<EdgeOpOverload: cortex_m_quantized_linear_default>"));
    }

    #[test]
    fn rejects_garbage_without_panicking() {
        assert!(parse(b"\x93NUMPY\x01\x00\xff\xff", 1 << 20).is_err());
        assert!(parse(b"not npy", 1 << 20).is_err());
    }

    /// A v1 .npy with `header` as its dict and `data` after it.
    fn npy_with(header: &str, data: &[u8]) -> Vec<u8> {
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(header.len() as u16).to_le_bytes());
        b.extend_from_slice(header.as_bytes());
        b.extend_from_slice(data);
        b
    }

    /// A shape whose product overflows panicked inside npyz in
    /// overflow-checked builds (the debug CLI); now an error before npyz.
    #[test]
    fn sizes_are_checked_before_npyz_sees_them() {
        let huge =
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }\n";
        assert_eq!(
            parse(&npy_with(huge, &[0; 16]), 1 << 20).err().unwrap(),
            "bad .npy header: shape product overflows"
        );
        // Within usize but more than the program holds, or than is present.
        let big = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000,), }\n";
        assert_eq!(
            parse(&npy_with(big, &[0; 16]), 1 << 30).err().unwrap(),
            "4000000 bytes of data declared, 16 present"
        );
        assert_eq!(
            parse(&npy_with(big, &vec![0; 4_000_000]), 1024)
                .err()
                .unwrap(),
            "4000000 bytes of data, more than the 1024 the program can hold"
        );
        let ok = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 1), }\n";
        let got = parse(&npy_with(ok, &[1, 0, 0, 0, 2, 0, 0, 0]), 8).unwrap();
        assert_eq!(
            (got.dtype, got.shape, got.data),
            (ScalarType::INT, vec![2, 1], vec![1, 0, 0, 0, 2, 0, 0, 0])
        );
        assert!(parse(&npy_with(ok, &[0; 8]), 7).is_err());
    }
}
