//! `.npy` / `.npz` files through the `npyz` and `zip` crates, as untyped
//! tensors: an ExecuTorch dtype, a shape and little-endian bytes in C order.

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

pub fn parse(bytes: &[u8]) -> Result<Npy, String> {
    from_file(NpyFile::new(bytes).map_err(|e| e.to_string())?)
}

pub fn read(path: &str) -> Result<Npy, String> {
    parse(&crate::read_file(path)?).map_err(|e| format!("{path}: {e}"))
}

/// Every array of a `.npz` (stored or deflated), in archive order.
pub fn read_npz(path: &str) -> Result<Vec<(String, Npy)>, String> {
    let err = |e: &dyn std::fmt::Display| format!("{path}: {e}");
    let bytes = crate::read_file(path)?;
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| err(&e))?;
    let mut out = Vec::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).map_err(|e| err(&e))?;
        let name = f.name().to_string();
        let Some(array) = name.strip_suffix(".npy") else {
            continue;
        };
        let mut buf = Vec::new();
        f.read_to_end(&mut buf).map_err(|e| err(&e))?;
        let npy = parse(&buf).map_err(|e| format!("{path}: {name}: {e}"))?;
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
        let back = parse(&bytes).unwrap();
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
        let arrays = read_npz(path).unwrap();
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
        assert!(parse(b"\x93NUMPY\x01\x00\xff\xff").is_err());
        assert!(parse(b"not npy").is_err());
    }
}
