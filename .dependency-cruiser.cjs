/**
 * Layer rules checked by `npm run lint:deps` (part of `npm test`); docs/architecture.md draws them. The domain
 * (services, repositories, engines, connectors, the store and the shared lower layers, and the composition root that
 * wires them) never sees the web: only src/api, src/http and src/handlers know Koa, openapi-backend, statuses and
 * headers. Below the services nothing reaches back up into them; a tag's services import no other tag's code. No
 * module of src takes part in an import cycle. Scripts (benchmarks, operator commands) import nothing from test/.
 * @type {import('dependency-cruiser').IConfiguration}
 */
/** What the services stand on: repositories, models, the store, the search core and its two engines, connectors and shared code. */
const belowServices = '^src/(repositories|models|store|search-core|sql-search|search-index|embeddings|connectors|rate-limit|rules|errors|lib|config|crypto)/';
const domain = `^src/services/|${belowServices}|^src/composition[.]ts$`;

module.exports = {
  forbidden: [
    {
      name: 'domain-not-to-web-layer',
      severity: 'error',
      comment: 'Services and engines return plain results or throw AppError codes; src/api and src/http turn them into HTTP.',
      from: { path: domain },
      to: { path: '^src/(api|http|handlers)/' },
    },
    {
      name: 'domain-not-to-web-framework',
      severity: 'error',
      comment: 'Koa and openapi-backend belong to the web layer (src/api, src/http, src/handlers, src/app.ts).',
      from: { path: domain },
      // Not anchored: a worktree whose node_modules is a link resolves packages to another checkout's node_modules.
      to: { path: '(^|/)node_modules/(koa|koa-[^/]+|@koa/[^/]+|openapi-backend)/' },
    },
    {
      name: 'engines-not-to-services',
      severity: 'error',
      comment: 'Engines, repositories and connectors are called by services with plain arguments; they never call a service back.',
      from: { path: belowServices },
      to: { path: '^src/(services/|composition[.]ts$)' },
    },
    {
      name: 'services-not-to-other-tags',
      severity: 'error',
      comment:
        "A tag's services reach another tag's only through domain events (src/lib/domain-events.ts) or an interface the " +
        'composition root passes them; rules several tags apply live below the services (src/rules). Naming the type of ' +
        'what the root passes (a type-only import) runs no code of the other tag and is allowed; src/services/callers.ts is shared.',
      from: { path: '^src/services/([^/]+)/' },
      to: { path: '^src/services/[^/]+/', pathNot: '^src/services/$1/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'tooling-not-to-tests',
      severity: 'error',
      comment: 'Benchmarks and operator scripts stand on scripts/lib and src; tests may use scripts/lib, never the reverse.',
      from: { path: '^scripts/' },
      to: { path: '^test/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle ties layers together that should point one way.',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a cycle through types still ties the layers together.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
