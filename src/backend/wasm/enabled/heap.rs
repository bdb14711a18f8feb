//! Two glibc allocator settings that make loading the guest cheaper. Both depend on glibc
//! internals (the arena layout below), so they sit apart in this small file for a reviewer,
//! and do nothing on other C libraries.

/// Lets every malloc arena grow in steps of 8 MiB. Loading the guest allocates megabytes of
/// metadata on its own thread, whose arena would otherwise be made usable a few pages at a
/// time, one system call each (about 250 per run). Only address space is reserved: a page is
/// still backed when it is first touched.
pub(super) fn grow_heaps_in_large_steps() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[expect(unsafe_code, reason = "mallopt is a C function")]
    // SAFETY: mallopt only changes glibc's allocator settings, under the allocator's own lock.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 8 << 20);
    }
}

/// Asks for transparent huge pages in the calling thread's malloc heap, as glibc's
/// `glibc.malloc.hugetlb=1` tunable does for every heap: loading and instantiating the guest
/// fill a few megabytes of fresh heap, about 830 page faults a run in small pages (over 2 ms
/// on a virtual machine) and a handful in 2 MiB ones. Where the kernel has no free huge page,
/// or transparent huge pages are off, the heap keeps small pages.
///
/// Only for a thread arena: glibc maps each one on its own, aligned to its maximum size, so
/// the arena is found from any block it handed out. The main heap (below the program break)
/// is left alone.
pub(super) fn huge_pages_for_this_threads_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    {
        /// glibc's `HEAP_MAX_SIZE` on 64-bit targets.
        const ARENA: usize = 64 << 20;
        let block = Box::new(0_u8);
        let address = std::ptr::from_ref::<u8>(std::hint::black_box(&block)).addr();
        #[expect(unsafe_code, reason = "sbrk and madvise are C functions")]
        // SAFETY: sbrk(0) only reads the program break. Neither madvise changes memory contents
        // or protections (a collapse copies small pages into a huge one); both fail harmlessly
        // on unmapped parts.
        unsafe {
            if address >= libc::sbrk(0).addr() {
                let arena = std::ptr::without_provenance_mut::<libc::c_void>(address & !(ARENA - 1));
                libc::madvise(arena, ARENA, libc::MADV_HUGEPAGE);
                libc::madvise(arena, 2 << 20, libc::MADV_COLLAPSE);
            }
        }
    }
}
