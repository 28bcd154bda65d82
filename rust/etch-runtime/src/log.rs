//! Logging through the `log` facade, compiled out entirely without the `log`
//! feature: then no format string or argument reaches the binary.

#[cfg(feature = "log")]
macro_rules! etch_log {
    (error, $($arg:tt)+) => { ::log::error!(target: "etch", $($arg)+) };
    (warn, $($arg:tt)+) => { ::log::warn!(target: "etch", $($arg)+) };
    (info, $($arg:tt)+) => { ::log::info!(target: "etch", $($arg)+) };
    (debug, $($arg:tt)+) => { ::log::debug!(target: "etch", $($arg)+) };
}

#[cfg(not(feature = "log"))]
macro_rules! etch_log {
    ($level:ident, $($arg:tt)+) => {{}};
}
