/**
 * A message's media as the seam carries it (issue 10, item 18): a size and a
 * way to read the bytes, never the bytes themselves.
 *
 * Owns: the one type for media crossing the seam. Each `open()` is a fresh
 * read from the start (a retry, or a network that reads twice, opens it
 * again), yielding the bytes in order in chunks of at most a few MiB, read
 * lazily: a chunk is fetched when the reader asks for it, so whoever reads
 * holds a chunk, not the file.
 * Must never: load the whole file to answer `open()`, or be shared state
 * between two reads (each read has its own cursor).
 */
export interface MediaSource {
  /** Total length in bytes, known before reading. */
  readonly size: number;
  /** A new read of the bytes from the start. Throws (while iterating) if they are gone or cannot be read. */
  open(): AsyncIterable<Uint8Array>;
}
