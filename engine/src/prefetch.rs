//! Software prefetch: the search starts loading a TT slot, and the evaluation its pawn-hash
//! slot, some time before reading it, so the memory latency overlaps useful work. One of the
//! engine's two modules with `unsafe` (the other is `huge_table`).

/// Starts loading the cache line that holds `value`. Only a hint: it never changes results.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let address: *const T = value;
        // SAFETY: `_mm_prefetch` needs SSE, which every x86_64 CPU has (SSE2 is part of the
        // x86_64 baseline target). A prefetch is only a hint: it reads and writes nothing
        // visible, cannot fault, and `address` comes from a live reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
