// Waits for a condition by polling, never by fixed sleeps.
export async function waitFor<T>(
  probe: () => Promise<T> | T,
  accept: (value: T) => boolean,
  { timeoutMs = 5000, intervalMs = 10, what = 'condition' } = {},
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
