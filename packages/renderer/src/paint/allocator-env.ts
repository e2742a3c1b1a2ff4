/**
 * Environment for the canvas binding's allocator, set before the binding loads (canvas.ts imports
 * this first). @napi-rs/canvas allocates with mimalloc, which by default asks the kernel for
 * transparent huge pages; every read-back (`getImageData`) gets a fresh buffer, and each fresh
 * 2 MB huge page was faulted in and zeroed whole for a caption band of 0.1-0.5 MB. In a word-pop
 * render that zeroing was 15% of the painting process's CPU samples, 38% with the band painted
 * transparent (perf, 10 s 1080x1920).
 * An operator's own MIMALLOC_ALLOW_THP wins.
 */
process.env.MIMALLOC_ALLOW_THP ??= '0';
