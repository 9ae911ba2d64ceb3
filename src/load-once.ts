/**
 * A module loaded the first time it is needed (issue 25: a gateway that never uses a library does not load it at
 * start), once per process; a load that failed is tried again at the next call rather than kept.
 *
 * Owns: remembering the one load in flight or done.
 * Must never: keep a failed load, or start a second load while one is in flight.
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | null = null;
  return () => {
    loaded ??= load().catch((error: unknown) => {
      loaded = null;
      throw error;
    });
    return loaded;
  };
}
