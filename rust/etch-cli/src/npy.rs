//! Minimal `.npy` (format 1.0/2.0) reading and writing: little-endian numeric
//! dtypes, C order.

use etch_pte::ScalarType;

pub struct Npy {
    pub dtype: ScalarType,
    pub shape: Vec<usize>,
    /// Elements in C (logical) order, little-endian.
    pub data: Vec<u8>,
}

fn descr(dtype: ScalarType) -> Option<&'static str> {
    Some(match dtype {
        ScalarType::FLOAT => "<f4",
        ScalarType::DOUBLE => "<f8",
        ScalarType::CHAR => "|i1",
        ScalarType::BYTE => "|u1",
        ScalarType::SHORT => "<i2",
        ScalarType::INT => "<i4",
        ScalarType::LONG => "<i8",
        ScalarType::BOOL => "|b1",
        _ => return None,
    })
}

fn dtype_of(descr: &str) -> Option<ScalarType> {
    Some(match descr {
        "<f4" => ScalarType::FLOAT,
        "<f8" => ScalarType::DOUBLE,
        "|i1" | "<i1" => ScalarType::CHAR,
        "|u1" | "<u1" => ScalarType::BYTE,
        "<i2" => ScalarType::SHORT,
        "<i4" => ScalarType::INT,
        "<i8" => ScalarType::LONG,
        "|b1" => ScalarType::BOOL,
        _ => return None,
    })
}

fn field<'h>(header: &'h str, key: &str) -> Option<&'h str> {
    let start = header.find(&format!("'{key}'"))? + key.len() + 2;
    let rest = header[start..].trim_start().strip_prefix(':')?.trim_start();
    Some(rest)
}

pub fn parse(bytes: &[u8]) -> Result<Npy, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file".into());
    }
    let (hlen, hstart) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = std::str::from_utf8(bytes.get(hstart..hstart + hlen).ok_or("truncated header")?)
        .map_err(|_| "header not UTF-8")?;
    let d = field(header, "descr").ok_or("no descr")?;
    let d = d.trim_start_matches(['\'', '"']);
    let d = &d[..d.find(['\'', '"']).ok_or("bad descr")?];
    let dtype = dtype_of(d).ok_or_else(|| format!("unsupported dtype {d}"))?;
    if field(header, "fortran_order").is_some_and(|v| v.starts_with("True")) {
        return Err("Fortran-order arrays are not supported".into());
    }
    let s = field(header, "shape").ok_or("no shape")?;
    let s = &s[s.find('(').ok_or("bad shape")? + 1..s.find(')').ok_or("bad shape")?];
    let shape: Vec<usize> = s
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| x.parse().map_err(|_| format!("bad shape entry {x}")))
        .collect::<Result<_, _>>()?;
    let n: usize = shape.iter().product();
    let size = dtype.element_size().unwrap_or(1);
    let data = bytes
        .get(hstart + hlen..hstart + hlen + n * size)
        .ok_or("truncated data")?
        .to_vec();
    Ok(Npy { dtype, shape, data })
}

pub fn read(path: &str) -> Result<Npy, String> {
    parse(&crate::read_file(path)?).map_err(|e| format!("{path}: {e}"))
}

pub fn to_bytes(npy: &Npy) -> Result<Vec<u8>, String> {
    let d = descr(npy.dtype).ok_or("dtype has no .npy equivalent")?;
    let shape = match npy.shape.len() {
        1 => format!("({},)", npy.shape[0]),
        _ => format!(
            "({})",
            npy.shape
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{d}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&npy.data);
    Ok(out)
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
}
