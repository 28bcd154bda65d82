//! Enumerations of `schema/program.fbs` and `schema/scalar_type.fbs`.

/// ExecuTorch `ScalarType` (`schema/scalar_type.fbs`), kept as the raw byte so
/// that a file may name any type; [`ScalarType::element_size`] says which ones
/// etch can size.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct ScalarType(pub i8);

impl ScalarType {
    pub const BYTE: ScalarType = ScalarType(0);
    pub const CHAR: ScalarType = ScalarType(1);
    pub const SHORT: ScalarType = ScalarType(2);
    pub const INT: ScalarType = ScalarType(3);
    pub const LONG: ScalarType = ScalarType(4);
    pub const HALF: ScalarType = ScalarType(5);
    pub const FLOAT: ScalarType = ScalarType(6);
    pub const DOUBLE: ScalarType = ScalarType(7);
    pub const BOOL: ScalarType = ScalarType(11);
    pub const QINT8: ScalarType = ScalarType(12);
    pub const QUINT8: ScalarType = ScalarType(13);
    pub const QINT32: ScalarType = ScalarType(14);
    pub const BFLOAT16: ScalarType = ScalarType(15);
    pub const BITS16: ScalarType = ScalarType(22);
    pub const UINT16: ScalarType = ScalarType(27);
    pub const UINT32: ScalarType = ScalarType(28);
    pub const UINT64: ScalarType = ScalarType(29);

    /// Bytes per element, or `None` for codes etch does not size (complex,
    /// sub-byte packed and unknown codes).
    pub const fn element_size(self) -> Option<usize> {
        // Bytes per code, 0 = not sized: a byte table (LLVM made the match
        // a table of words, one per use).
        const SIZES: [u8; 30] = [
            1, 1, 2, 4, 8, 2, 4, 8, // BYTE CHAR SHORT INT LONG HALF FLOAT DOUBLE
            0, 0, 0, // complex
            1, 1, 1, 4, 2, // BOOL QINT8 QUINT8 QINT32 BFLOAT16
            0, 0, 0, 0, 0, 0, // sub-byte packed, BITS1x8.. BITS8
            2, // BITS16
            1, 1, 1, 1, // float8 variants
            2, 4, 8, // UINT16 UINT32 UINT64
        ];
        let i = self.0 as u8 as usize;
        if self.0 < 0 || i >= SIZES.len() || SIZES[i] == 0 {
            return None;
        }
        Some(SIZES[i] as usize)
    }

    /// ExecuTorch's name (`FLOAT`, `CHAR`, ...), `UNKNOWN` otherwise.
    pub const fn name(self) -> &'static str {
        match self.0 {
            0 => "BYTE",
            1 => "CHAR",
            2 => "SHORT",
            3 => "INT",
            4 => "LONG",
            5 => "HALF",
            6 => "FLOAT",
            7 => "DOUBLE",
            11 => "BOOL",
            12 => "QINT8",
            13 => "QUINT8",
            14 => "QINT32",
            15 => "BFLOAT16",
            16 => "QUINT4X2",
            17 => "QUINT2X4",
            22 => "BITS16",
            23 => "FLOAT8E5M2",
            24 => "FLOAT8E4M3FN",
            25 => "FLOAT8E5M2FNUZ",
            26 => "FLOAT8E4M3FNUZ",
            27 => "UINT16",
            28 => "UINT32",
            29 => "UINT64",
            _ => "UNKNOWN",
        }
    }
}

/// The `KernelTypes` union tag of an `EValue`.
#[repr(u8)]
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum ValueKind {
    Null = 1,
    Int = 2,
    Bool = 3,
    Double = 4,
    Tensor = 5,
    String = 6,
    IntList = 7,
    DoubleList = 8,
    BoolList = 9,
    TensorList = 10,
    OptionalTensorList = 11,
}

impl ValueKind {
    pub const ALL: [ValueKind; 11] = [
        ValueKind::Null,
        ValueKind::Int,
        ValueKind::Bool,
        ValueKind::Double,
        ValueKind::Tensor,
        ValueKind::String,
        ValueKind::IntList,
        ValueKind::DoubleList,
        ValueKind::BoolList,
        ValueKind::TensorList,
        ValueKind::OptionalTensorList,
    ];

    pub fn from_tag(tag: u8) -> Option<ValueKind> {
        // `ALL` is in tag order from 1 (a test checks it): an index, not a
        // search.
        Self::ALL.get((tag as usize).wrapping_sub(1)).copied()
    }

    pub const fn name(self) -> &'static str {
        match self {
            ValueKind::Null => "Null",
            ValueKind::Int => "Int",
            ValueKind::Bool => "Bool",
            ValueKind::Double => "Double",
            ValueKind::Tensor => "Tensor",
            ValueKind::String => "String",
            ValueKind::IntList => "IntList",
            ValueKind::DoubleList => "DoubleList",
            ValueKind::BoolList => "BoolList",
            ValueKind::TensorList => "TensorList",
            ValueKind::OptionalTensorList => "OptionalTensorList",
        }
    }
}

/// The `InstructionArguments` union tag of an `Instruction`.
#[repr(u8)]
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum InstructionKind {
    KernelCall = 1,
    DelegateCall = 2,
    MoveCall = 3,
    JumpFalseCall = 4,
    FreeCall = 5,
}

impl InstructionKind {
    pub fn from_tag(tag: u8) -> Option<InstructionKind> {
        Some(match tag {
            1 => InstructionKind::KernelCall,
            2 => InstructionKind::DelegateCall,
            3 => InstructionKind::MoveCall,
            4 => InstructionKind::JumpFalseCall,
            5 => InstructionKind::FreeCall,
            _ => return None,
        })
    }
}

/// `TensorShapeDynamism`.
#[repr(i8)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ShapeDynamism {
    Static = 0,
    DynamicBound = 1,
    DynamicUnbound = 2,
}

impl ShapeDynamism {
    pub fn from_raw(v: i8) -> Option<ShapeDynamism> {
        Some(match v {
            0 => ShapeDynamism::Static,
            1 => ShapeDynamism::DynamicBound,
            2 => ShapeDynamism::DynamicUnbound,
            _ => return None,
        })
    }
}

/// `TensorDataLocation`: where a tensor's data lives.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TensorDataLocation {
    Segment = 0,
    External = 1,
}

/// `DataLocation` of a delegate's processed blob.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DataLocation {
    Inline = 0,
    Segment = 1,
}

#[cfg(test)]
mod element_size_tests {
    use super::ScalarType;

    /// The byte table gives what ExecuTorch's `elementSize` gives for every
    /// code etch sizes, and `None` for every other byte.
    #[test]
    fn element_size_of_every_code() {
        for code in i8::MIN..=i8::MAX {
            let want = match code {
                0 | 1 | 11 | 12 | 13 => Some(1),
                2 | 5 | 15 | 22 | 27 => Some(2),
                3 | 6 | 14 | 28 => Some(4),
                4 | 7 | 29 => Some(8),
                23..=26 => Some(1), // float8 variants
                _ => None,
            };
            assert_eq!(ScalarType(code).element_size(), want, "code {code}");
        }
    }
}

#[cfg(test)]
mod value_kind_tests {
    use super::ValueKind;

    /// Every byte: the tags 1..=11 give their kind, nothing else does.
    #[test]
    fn from_tag_of_every_byte() {
        let mut found = 0;
        for tag in 0..=u8::MAX {
            match ValueKind::from_tag(tag) {
                Some(k) => {
                    assert_eq!(k as u8, tag);
                    found += 1;
                }
                None => assert!(tag == 0 || tag > 11, "tag {tag}"),
            }
        }
        assert_eq!(found, 11);
        assert_eq!(ValueKind::from_tag(5), Some(ValueKind::Tensor));
    }
}
