/**
 * Small hooks every view shares: the hash route, polling while the page is
 * visible, loading data with its error, and where focus goes when a form
 * opens in place and closes.
 */
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { apiPaths } from './features';

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

/**
 * A form a button opens in place (a small dialog): `close` hides it and puts
 * focus back on the button that opened it, so a keyboard user is where they were.
 */
export function useDisclosure(): {
  open: boolean;
  opener: { current: HTMLButtonElement | null };
  toggle: () => void;
  close: () => void;
} {
  const [open, setOpen] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  return {
    open,
    opener,
    toggle: () => setOpen((o) => !o),
    close: () => {
      setOpen(false);
      opener.current?.focus();
    },
  };
}

/** For the opened form itself: focus on its first field when it appears; Escape closes it. */
export function useOpenedForm(onClose: () => void): {
  ref: { current: HTMLFormElement | null };
  onKeyDown: (e: KeyboardEvent) => void;
} {
  const ref = useRef<HTMLFormElement>(null);
  useLayoutEffect(() => {
    ref.current?.querySelector<HTMLElement>('input, select, textarea')?.focus();
  }, []);
  return {
    ref,
    onKeyDown: (e) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      onClose();
    },
  };
}

/**
 * Whether the gateway documents a route (its OpenAPI paths, features.ts): null until known. A page offers a
 * section only when its routes exist (a gateway of an earlier version lacks them).
 */
export function useHasRoute(path: string): boolean | null {
  const [has, setHas] = useState<boolean | null>(null);
  useEffect(() => {
    let live = true;
    void apiPaths().then((paths) => {
      if (live) setHas(paths.has(path));
    });
    return () => {
      live = false;
    };
  }, [path]);
  return has;
}
