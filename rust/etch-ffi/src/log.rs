//! Logging: with the `log` feature, the runtime's records are formatted into
//! a stack buffer and handed to `etch_log_write()`, which the platform
//! provides (the Zephyr glue forwards to `LOG_MODULE_REGISTER(etch)`).
//! Without the feature this module is empty: no logger, no format strings.

/// Log levels passed to `etch_log_write` (the `log` crate's and Zephyr's
/// `LOG_LEVEL_*` numbering; trace maps to debug on Zephyr).
pub const ETCH_LOG_LEVEL_ERROR: i32 = 1;
pub const ETCH_LOG_LEVEL_WARN: i32 = 2;
pub const ETCH_LOG_LEVEL_INFO: i32 = 3;
pub const ETCH_LOG_LEVEL_DEBUG: i32 = 4;
pub const ETCH_LOG_LEVEL_TRACE: i32 = 5;
/// Longest message `etch_log_write` gets (longer ones are cut), NUL excluded.
pub const ETCH_LOG_MAX_MESSAGE: usize = 127;

use core::ffi::{c_char, c_int};

extern "C" {
    /// Provided by the platform when the library is built with logging
    /// (`log` feature; Zephyr: `CONFIG_ETCH_LOG`): writes one formatted
    /// record at `level` (`ETCH_LOG_LEVEL_*`). `msg` holds `len` bytes and a
    /// NUL after them, valid during the call only. Not referenced otherwise.
    pub fn etch_log_write(level: c_int, msg: *const c_char, len: usize);
}

#[cfg(feature = "log")]
mod imp {
    use core::fmt::Write;

    use super::{c_int, etch_log_write, ETCH_LOG_MAX_MESSAGE};

    struct Buffer {
        bytes: [u8; ETCH_LOG_MAX_MESSAGE + 1],
        len: usize,
    }

    impl Write for Buffer {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            let room = self
                .bytes
                .get_mut(self.len..ETCH_LOG_MAX_MESSAGE)
                .unwrap_or(&mut []);
            let n = room.len().min(s.len());
            for (d, c) in room.iter_mut().zip(s.bytes()) {
                *d = c;
            }
            self.len = self.len.saturating_add(n);
            Ok(())
        }
    }

    struct CLogger;

    impl log::Log for CLogger {
        fn enabled(&self, _: &log::Metadata<'_>) -> bool {
            true
        }

        fn log(&self, record: &log::Record<'_>) {
            let mut buf = Buffer {
                bytes: [0; ETCH_LOG_MAX_MESSAGE + 1],
                len: 0,
            };
            let _ = write!(buf, "{}", record.args());
            // SAFETY: `bytes` holds `len <= ETCH_LOG_MAX_MESSAGE` bytes and a
            // NUL after them (zero-filled); the platform reads them during
            // the call only.
            unsafe { etch_log_write(record.level() as c_int, buf.bytes.as_ptr().cast(), buf.len) };
        }

        fn flush(&self) {}
    }

    static LOGGER: CLogger = CLogger;

    #[cfg(target_has_atomic = "ptr")]
    pub(crate) fn init() {
        // Fails harmlessly when already set (by us or by the application).
        let _ = log::set_logger(&LOGGER);
        log::set_max_level(log::LevelFilter::Trace);
    }

    /// Without compare-and-swap (Armv6-M) the logger can only be installed
    /// racily: `etch_log_init()` does it, once, before other etch calls.
    #[cfg(not(target_has_atomic = "ptr"))]
    pub(crate) fn init() {}

    #[cfg(not(target_has_atomic = "ptr"))]
    pub(crate) fn init_racy() {
        // SAFETY: etch_log_init's contract: called once, from one thread,
        // before any other etch call, so nothing logs, installs a logger or
        // sets the level meanwhile.
        unsafe {
            let _ = log::set_logger_racy(&LOGGER);
            log::set_max_level_racy(log::LevelFilter::Trace);
        }
    }
}

#[cfg(feature = "log")]
pub(crate) use imp::init;

#[cfg(not(feature = "log"))]
pub(crate) fn init() {}

/// Installs the logger that forwards to `etch_log_write`. Optional where the
/// target has atomic compare-and-swap (`etch_program_load` installs it);
/// required on Armv6-M (Cortex-M0/M0+), where it must be called once, from
/// one thread, before any other etch call. Does nothing in builds without
/// logging.
#[no_mangle]
pub extern "C" fn etch_log_init() {
    #[cfg(all(feature = "log", not(target_has_atomic = "ptr")))]
    imp::init_racy();
    init();
}
