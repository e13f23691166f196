/**
 * Layer rules checked by `npm run lint:deps` (part of `npm test`). The domain (services, repositories, engines,
 * connectors, the store and the shared lower layers) never sees the web: only src/api, src/http and src/handlers
 * know Koa, openapi-backend, statuses and headers. No module of src takes part in an import cycle.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const domain = '^src/(services|repositories|search|semantic|connectors|rate-limit|store|models|index|errors|lib|config|crypto)/';

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
      to: { path: '^node_modules/(koa|koa-[^/]+|@koa/[^/]+|openapi-backend)/' },
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
