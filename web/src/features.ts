/**
 * Which optional routes this gateway has, read once from its public OpenAPI
 * document (a route being built on another branch may not exist yet).
 */
let paths: Promise<Set<string>> | null = null;

export function apiPaths(): Promise<Set<string>> {
  paths ??= fetch('/openapi.json')
    .then((r) => (r.ok ? (r.json() as Promise<{ paths?: Record<string, unknown> }>) : { paths: {} }))
    .then((doc) => new Set(Object.keys(doc.paths ?? {})))
    .catch(() => new Set<string>());
  return paths;
}
