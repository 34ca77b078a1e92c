/**
 * The direction of imports (docs/architecture.md, "Layers"), checked by dependency-cruiser as a
 * step of `npm test` (test/run-all.ts) and by `npm run check:layers`:
 *   depcruise --config .dependency-cruiser.cjs src worker bench test
 * A path below is relative to the project root; type-only imports count like the others.
 */
module.exports = {
  forbidden: [
    {
      name: 'db-imports-nothing-above',
      comment:
        'src/db/ (pool, transactions, migrations, connection loss) is the bottom layer: it imports only ' +
        'itself and src/config.ts, never the HTTP layer, authentication, the back-office, the commands, ' +
        'the organisation import, storage, the worker, bench/ or test/.',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: '^(src|worker|bench|test|web)/', pathNot: '^src/(db/|config\\.ts$)' },
    },
    {
      name: 'auth-not-backoffice',
      comment:
        'Authentication (src/auth/: the back-office login, its second factor, the session cookies and ' +
        'the BackofficeSession type included) is shared by the API and the back-office: it never imports ' +
        'the back-office (src/backoffice/), whose pages draw the login on top of it.',
      severity: 'error',
      from: { path: '^src/auth/' },
      to: { path: '^src/backoffice/' },
    },
    {
      name: 'production-not-bench-or-test',
      comment:
        'What runs in production (src/, worker/) never imports bench/ or test/: a production install ' +
        'ships neither, and a test helper must not decide how the service behaves.',
      severity: 'error',
      from: { path: '^(src|worker)/' },
      to: { path: '^(bench|test)/' },
    },
    {
      name: 'no-cycles',
      comment: 'No import loop between modules: each module can be read, tested and loaded on its own.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|web/dist)/' },
    // Type-only imports are dependencies too: a type of an upper layer ties the lower one to it.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'] },
  },
};
