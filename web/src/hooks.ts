/**
 * Small hooks every view shares: the hash route, polling while the page is
 * visible, and loading data with its error.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/** The part of the location after `#`, e.g. `/devices/3/pair`. Hash routes need no server fallback. */
export function useRoute(): string {
  const read = () => location.hash.replace(/^#/, '') || '/devices';
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const update = () => setRoute(read());
    addEventListener('hashchange', update);
    // The hash may have changed between the first render and this effect: catch up once.
    update();
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

export function navigate(path: string): void {
  location.hash = path;
}

/** Runs `tick` now and every `ms` while the page is visible; again at once when it becomes visible. */
export function usePolling(tick: () => void | Promise<void>, ms: number, deps: unknown[] = []): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const run = async () => {
      if (stopped) return;
      if (document.visibilityState === 'visible') {
        try {
          await latest.current();
        } catch {
          // each view shows its own errors
        }
      }
      if (!stopped) timer = setTimeout(run, ms);
    };
    const onVisible = () => {
      if (document.visibilityState !== 'visible') return;
      clearTimeout(timer);
      void run();
    };
    void run();
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [ms, ...deps]);
}

/** A one-shot action's state: running, and the failure to show next to it. */
export function useAction<A extends unknown[]>(
  action: (...args: A) => Promise<void>,
): { run: (...args: A) => Promise<void>; busy: boolean; error: unknown; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(
    async (...args: A) => {
      setBusy(true);
      setError(null);
      try {
        await action(...args);
      } catch (failure) {
        setError(failure);
      } finally {
        setBusy(false);
      }
    },
    [action],
  );
  return { run, busy, error, clear: () => setError(null) };
}
