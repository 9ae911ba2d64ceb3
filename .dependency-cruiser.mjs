/**
 * The layering of src/, checked by dependency-cruiser (`npm run lint:deps`, part of `npm run lint` and so of CI).
 * docs/internals.md (The shape) says the same in words.
 *
 *   entry points (src/main.ts, src/cli/)  ─▶  composition root (src/app.ts, src/composition/)
 *     ─▶ routes (src/<feature>/routes.ts, src/http/)  ─▶  services (everything else in a feature folder)
 *     ─▶ repositories (src/<feature>/repository.ts, *-repository.ts)  ─▶  store (src/store/)
 *
 * Below every layer: src/errors.ts, src/clock.ts, src/ids.ts, src/phone-number.ts, src/config.ts, src/forms.ts.
 * The networks (src/network/whatsapp/, src/network/sandbox/) are reached through the seam only.
 */
const ROOT = '^src/(app\\.ts|composition/)';
const ENTRY = '^src/(main\\.ts|cli/)';
const FEATURES =
  '(accounts|chats|contacts|devices|dispatch|events|groups|media|messages|sandbox-control|cluster|outbound)';
const ROUTES = `^src/${FEATURES}/(routes|holder-routes|admin-routes)\\.ts$`;
/** The HTTP edge: src/http/, the routes, and the cluster's forwarding hook (it passes requests on over HTTP). */
const EDGE = `^src/http/|${ROUTES}|^src/cluster/forward\\.ts$`;
const REPOSITORIES = '^src/[a-z-]+/[a-z-]*repository\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment:
        'No import cycle anywhere in src/, type-only imports included: move the shared piece down, or let the lower module own an interface the higher one fills.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'app-only-from-entry-points',
      comment:
        'src/app.ts is the composition root: only the entry points build it (tests do too; they are not cruised).',
      severity: 'error',
      from: { path: '^src/', pathNot: ENTRY },
      to: { path: '^src/app\\.ts$' },
    },
    {
      name: 'composition-only-from-root',
      comment: 'The composition root is imported by app.ts and the entry points only.',
      severity: 'error',
      from: { path: '^src/', pathNot: `${ROOT}|${ENTRY}` },
      to: { path: '^src/composition/' },
    },
    {
      name: 'networks-behind-the-seam',
      comment:
        'Outside src/network/, only the composition root and the entry points reach the network implementations, and only through their index.ts.',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/network/|${ROOT}|${ENTRY}` },
      to: { path: '^src/network/(whatsapp|sandbox)/' },
    },
    {
      name: 'networks-through-their-index',
      comment:
        'From anywhere outside an implementation folder, src/network/whatsapp/ and src/network/sandbox/ are reached through their index.ts.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/network/(whatsapp|sandbox)/' },
      to: { path: '^src/network/(whatsapp|sandbox)/', pathNot: '^src/network/(whatsapp|sandbox)/index\\.ts$' },
    },
    {
      name: 'networks-apart',
      comment: 'One network implementation never imports the other.',
      severity: 'error',
      from: { path: '^src/network/(whatsapp|sandbox)/' },
      to: { path: '^src/network/(whatsapp|sandbox)/', pathNot: '^src/network/$1/' },
    },
    {
      name: 'services-not-http',
      comment: 'Services, repositories and the store never import src/http/ (the error type is src/errors.ts).',
      severity: 'error',
      from: { path: '^src/', pathNot: `${EDGE}|${ROOT}|${ENTRY}` },
      to: { path: '^src/http/' },
    },
    {
      name: 'routes-from-root-only',
      comment: 'Routes are registered by the composition root; nothing below imports them.',
      severity: 'error',
      from: { path: '^src/', pathNot: `${ROOT}|${ENTRY}` },
      to: { path: ROUTES },
    },
    {
      name: 'repositories-below-services',
      comment: 'A repository holds SQL only: it never imports a service, a route or src/http/.',
      severity: 'error',
      from: { path: REPOSITORIES },
      to: { path: [ROUTES, '^src/[a-z-]+/service\\.ts$', '^src/http/', ROOT] },
    },
    {
      name: 'cluster-is-asked',
      comment:
        'The dispatcher, the deliverer and the connection manager ask the cluster, never the other way round: outside its routes (holder-routes.ts, forward.ts) src/cluster/ imports no feature; it owns ports the composition root fills.',
      severity: 'error',
      from: { path: '^src/cluster/', pathNot: '^src/cluster/(holder-routes|forward)\\.ts$' },
      to: { path: '^src/(accounts|contacts|devices|dispatch|events|groups|media|messages|sandbox-control)/' },
    },
    {
      name: 'store-at-the-bottom',
      comment:
        'src/store/ knows no feature, no route, no network and no composition, its repositories included: a job that needs a feature (retention deleting messages) is handed it as a port by the composition root.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: `^src/${FEATURES}/|^src/(http|network|cli|composition)/|^src/(app|main)\\.ts$` },
    },
    {
      name: 'network-knows-no-gateway',
      comment:
        'The network seam and its implementations know nothing of the gateway above them: no feature, route, store or composition.',
      severity: 'error',
      from: { path: '^src/network/' },
      to: { path: `^src/${FEATURES}/|^src/(http|store|cli|composition)/|^src/(app|main)\\.ts$` },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/.*\\.d\\.ts$' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
