/**
 * The start and stop order of the gateway's running parts, derived from what each part needs.
 *
 * Owns: the order. A component names the components it needs; it starts after them and stops before
 * them, so stopping is starting run backwards. Ties keep the order the components are listed in. A name
 * that is not listed, a component listed twice or a circle of needs is refused when the list is made.
 * Must never: build a component or know what one does (src/composition/root.ts lists them).
 */

export interface Component<Name extends string = string> {
  readonly name: Name;
  /** Components that must be running before this one starts, and still running until it has stopped. */
  readonly needs?: readonly NoInfer<Name>[];
  readonly start?: () => void | Promise<void>;
  readonly stop?: () => void | Promise<void>;
}

export interface Lifecycle {
  /** Start order; stop runs it backwards. */
  readonly order: readonly string[];
  /** Starts every component in order, one at a time. */
  start(): Promise<void>;
  /** Stops every component in reverse order, one at a time (also those whose start never ran). */
  stop(): Promise<void>;
}

export function lifecycle<Name extends string>(components: readonly Component<Name>[]): Lifecycle {
  const ordered = startOrder(components);
  return {
    order: ordered.map((component) => component.name),
    async start() {
      for (const component of ordered) await component.start?.();
    },
    async stop() {
      for (const component of [...ordered].reverse()) await component.stop?.();
    },
  };
}

/** A topological order of the components: each after what it needs, ties in listing order. */
function startOrder<Name extends string>(components: readonly Component<Name>[]): Component<Name>[] {
  const byName = new Map<string, Component<Name>>();
  for (const component of components) {
    if (byName.has(component.name)) throw new Error(`component ${component.name} is listed twice`);
    byName.set(component.name, component);
  }
  for (const component of components) {
    for (const need of component.needs ?? []) {
      if (!byName.has(need)) throw new Error(`component ${component.name} needs ${need}, which is not listed`);
    }
  }
  const placed = new Set<string>();
  const order: Component<Name>[] = [];
  while (order.length < components.length) {
    const next = components.find(
      (component) => !placed.has(component.name) && (component.needs ?? []).every((need) => placed.has(need)),
    );
    if (next === undefined) {
      const left = components.filter((component) => !placed.has(component.name)).map((component) => component.name);
      throw new Error(`components need each other in a circle: ${left.join(', ')}`);
    }
    placed.add(next.name);
    order.push(next);
  }
  return order;
}
