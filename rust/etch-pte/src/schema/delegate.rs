//! Delegates: [`BackendDelegate`], where its data is
//! ([`BackendDelegateDataReference`], [`BackendDelegateInlineData`]) and its
//! [`CompileSpec`]s.

use super::*;

table_view!(
    /// A delegate: backend id, processed blob reference, compile specs.
    BackendDelegate
);
impl<'a> BackendDelegate<'a> {
    pub fn id(&self) -> Result<&'a str> {
        utf8(self.id_bytes()?, "BackendDelegate.id is not UTF-8", &self.0)
    }
    /// The id's bytes, not checked for UTF-8.
    #[inline(always)]
    pub fn id_bytes(&self) -> Result<&'a [u8]> {
        self.0
            .required_string(slot::backend_delegate::ID, "BackendDelegate.id missing")
    }
    #[inline(always)]
    pub fn processed(&self) -> Result<BackendDelegateDataReference<'a>> {
        self.0
            .required_table(
                slot::backend_delegate::PROCESSED,
                "BackendDelegate.processed missing",
            )
            .map(BackendDelegateDataReference)
    }
    #[inline(always)]
    pub fn compile_specs(&self) -> Result<Vector<'a, CompileSpec<'a>>> {
        self.0
            .vector_or_empty(slot::backend_delegate::COMPILE_SPECS)
    }
}

table_view!(
    /// Where a delegate's processed blob is.
    BackendDelegateDataReference
);
impl<'a> BackendDelegateDataReference<'a> {
    pub fn location(&self) -> Result<DataLocation> {
        let raw: i8 = self
            .0
            .scalar(slot::backend_delegate_data_reference::LOCATION, 0)?;
        match raw {
            0 => Ok(DataLocation::Inline),
            1 => Ok(DataLocation::Segment),
            _ => Err(Error::invalid(
                "BackendDelegateDataReference.location out of range",
                self.position(),
            )),
        }
    }
    #[inline(always)]
    pub fn index(&self) -> Result<u32> {
        self.0
            .scalar(slot::backend_delegate_data_reference::INDEX, 0)
    }
}

table_view!(
    /// A backend compile option: key and opaque bytes.
    CompileSpec
);
impl<'a> CompileSpec<'a> {
    #[inline(always)]
    pub fn key(&self) -> Result<&'a [u8]> {
        self.0.string_or_empty(slot::compile_spec::KEY)
    }
    #[inline(always)]
    pub fn value(&self) -> Result<&'a [u8]> {
        // A `[ubyte]` vector has a string's layout (u32 length, bytes):
        // the string reader returns its bytes as one view (no separate byte-vector reader).
        self.0.string_or_empty(slot::compile_spec::VALUE)
    }
}

table_view!(
    /// An inline delegate blob.
    BackendDelegateInlineData
);
impl<'a> BackendDelegateInlineData<'a> {
    #[inline(always)]
    pub fn data(&self) -> Result<&'a [u8]> {
        // A `[ubyte]` vector has a string's layout (u32 length, bytes):
        // the string reader returns its bytes as one view (no separate byte-vector reader).
        self.0.string_or_empty(slot::single::VALUE)
    }
}
