// Waits for a condition by polling, never by fixed sleeps.
//
// The bound is a guard against a hang, not a promise of speed (a test that promises a time asserts it itself):
// 30 s by default, as a file shares its process and the machine with others (docs/testing.md) and something
// that takes 0.3 s alone took over 5 s on a loaded 2-core machine. A condition met returns at once.
export const WAIT_TIMEOUT_MS = 30_000;

export async function waitFor<T>(
  probe: () => Promise<T> | T,
  accept: (value: T) => boolean,
  { timeoutMs = WAIT_TIMEOUT_MS, intervalMs = 10, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await probe();
    if (accept(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
