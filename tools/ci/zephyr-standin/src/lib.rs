//! Stand-in for zephyr-lang-rust's `zephyr` crate in CI (see Cargo.toml):
//! `printkln!` type-checks its arguments and hands the formatted text to an
//! external `printk_standin` the final link would have to provide (CI only
//! compiles), and a panic handler that loops, as a no_std crate needs one.
#![no_std]

#[doc(hidden)]
pub fn printk_args(args: core::fmt::Arguments<'_>) {
    extern "Rust" {
        fn printk_standin(args: core::fmt::Arguments<'_>);
    }
    // SAFETY: never executed; CI compiles the crate for each target and
    // links nothing (the symbol is deliberately left undefined).
    unsafe { printk_standin(args) }
}

/// zephyr::printkln!: one formatted line on the console.
#[macro_export]
macro_rules! printkln {
    ($($arg:tt)*) => {
        $crate::printk_args(format_args!($($arg)*))
    };
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}
