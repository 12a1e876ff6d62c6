//! A fixed-size table in memory that Linux may back with 2 MB pages (transparent huge pages).
//!
//! The transposition table is read at random addresses on almost every node. With 4 KB pages a
//! 16 MB table spans 4,096 pages, more than the CPU's TLB holds, so most probes also miss the
//! TLB and pay a page walk (two-dimensional in a virtual machine) on top of the cache miss,
//! which the prefetch cannot always hide. The table is aligned to 2 MB and marked with
//! `madvise(MADV_HUGEPAGE)` before it is first written, so the kernel backs it with huge pages
//! where it can (`/sys/kernel/mm/transparent_hugepage/enabled` set to `always` or `madvise`).
//! Where it cannot, or off Linux, the table works the same on ordinary pages.

use std::alloc::{self, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

const HUGE_PAGE: usize = 2 << 20;

/// Owns `len` values of `T` in one 2 MB-aligned allocation; derefs to a slice.
pub struct HugeTable<T: Copy> {
    ptr: NonNull<T>,
    len: usize,
    layout: Layout,
}

impl<T: Copy> HugeTable<T> {
    /// A table of `len` (at least 1) copies of `fill`.
    pub fn new(len: usize, fill: T) -> HugeTable<T> {
        assert!(
            std::mem::size_of::<T>() > 0,
            "zero-sized entries need no table"
        );
        let len = len.max(1);
        let size = len
            .checked_mul(std::mem::size_of::<T>())
            .expect("table size overflows usize");
        let align = HUGE_PAGE.max(std::mem::align_of::<T>());
        let layout = Layout::from_size_align(size, align).expect("table layout");
        // SAFETY: `layout` has a non-zero size (len >= 1 and T is not zero-sized).
        let raw = unsafe { alloc::alloc(layout) };
        let Some(bytes) = NonNull::new(raw) else {
            alloc::handle_alloc_error(layout)
        };
        advise_huge_pages(bytes, size);
        let ptr = bytes.cast::<T>();
        for i in 0..len {
            // SAFETY: the allocation holds `len` values of `T` and is aligned for `T` (its
            // alignment is at least `align_of::<T>()`), so `ptr.add(i)` for i < len is in
            // bounds and aligned; `write` does not read or drop the uninitialised old value.
            unsafe { ptr.add(i).write(fill) };
        }
        HugeTable { ptr, len, layout }
    }
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(start: NonNull<u8>, size: usize) {
    // SAFETY: `madvise` only gives the kernel a hint about pages of a range this table owns
    // (`start`, `size` bytes, page-aligned because it is 2 MB-aligned); it does not change the
    // memory's contents or validity. A failure (e.g. THP disabled) leaves ordinary pages, so
    // the result is ignored.
    unsafe {
        libc::madvise(start.as_ptr().cast(), size, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: NonNull<u8>, _size: usize) {}

impl<T: Copy> Deref for HugeTable<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` points to `len` initialised values of `T` (all written in `new`) that
        // live as long as `self`; the shared borrow of `self` keeps them from being mutated.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> DerefMut for HugeTable<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and the exclusive borrow of `self` makes this the only
        // reference to the values while it lives.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Drop for HugeTable<T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `alloc::alloc(self.layout)` in `new` and is freed only here,
        // once. `T: Copy` has no destructor to run.
        unsafe { alloc::dealloc(self.ptr.as_ptr().cast(), self.layout) };
    }
}

// SAFETY: a `HugeTable<T>` owns its values exclusively, like a `Box<[T]>`: moving it to another
// thread moves that ownership, and sharing `&HugeTable<T>` only shares `&[T]`.
unsafe impl<T: Copy + Send> Send for HugeTable<T> {}
// SAFETY: see `Send`; `&HugeTable<T>` gives out only `&[T]`, which is `Sync` when `T` is.
unsafe impl<T: Copy + Sync> Sync for HugeTable<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_len_copies_and_is_writable() {
        let mut table = HugeTable::new(1000, 7u64);
        assert_eq!(table.len(), 1000);
        assert!(table.iter().all(|&v| v == 7));
        table[999] = 9;
        table.fill(3);
        assert_eq!(table.iter().sum::<u64>(), 3000);
        assert_eq!(table.as_ptr() as usize % HUGE_PAGE, 0);
    }

    #[test]
    fn a_zero_length_table_has_one_entry() {
        assert_eq!(HugeTable::new(0, 1u16).len(), 1);
    }
}
