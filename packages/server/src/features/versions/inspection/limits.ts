/**
 * Bounds on the work one inspection may do. Binaries come from callers (up to 500 MiB), so every size the
 * archive declares is checked against these before we allocate or loop on it.
 */

/** Largest AndroidManifest.xml (binary XML or protobuf) we decompress. Real ones are a few KiB to ~1 MiB. */
export const MAX_MANIFEST_BYTES = 8 * 1024 * 1024;

/** Largest Info.plist we decompress. Real ones are a few KiB. */
export const MAX_INFO_PLIST_BYTES = 2 * 1024 * 1024;

/** Largest .xctestrun we decompress. Real ones are 5–50 KiB, more with many test plan configurations. */
export const MAX_XCTESTRUN_BYTES = 4 * 1024 * 1024;

/**
 * Most central directory entries we walk. Big games ship tens of thousands of files; a 500 MiB zip of empty
 * files could declare millions, which would only cost time.
 */
export const MAX_ZIP_ENTRIES = 500_000;
