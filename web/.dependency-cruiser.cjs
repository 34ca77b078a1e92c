/**
 * The layers of the web application (docs/architecture.md, "The web application"), checked by
 * `npm run web:deps` (run by `npm test`): shared code (api/, components/, lib/) imports no
 * feature, screen or app module; a feature imports no other feature, no screen and not the app;
 * screens (routes/) compose features but never import the app; nothing imports in a cycle.
 */
module.exports = {
  forbidden: [
    {
      name: 'feature-imports-another-feature',
      comment: 'A feature never imports another feature: what two features share goes to components/ or lib/, and a screen (routes/) composes them.',
      severity: 'error',
      from: { path: '^web/src/features/([^/]+)/' },
      to: { path: '^web/src/features/', pathNot: '^web/src/features/$1/' },
    },
    {
      name: 'shared-imports-upwards',
      comment: 'api/, components/ and lib/ are shared by every feature: they import no feature, screen or app module.',
      severity: 'error',
      from: { path: '^web/src/(api|components|lib)/' },
      to: { path: '^web/src/(features|routes|app)/' },
    },
    {
      name: 'feature-imports-a-screen-or-the-app',
      comment: 'Features are composed by screens and the app, never the other way.',
      severity: 'error',
      from: { path: '^web/src/features/' },
      to: { path: '^web/src/(routes|app)/' },
    },
    {
      name: 'screen-imports-the-app',
      comment: 'Screens are listed by the app (app/screens.tsx); they do not import it.',
      severity: 'error',
      from: { path: '^web/src/routes/' },
      to: { path: '^web/src/app/' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycle.',
      severity: 'error',
      from: { path: '^web/src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves.',
      severity: 'error',
      from: { path: '^web/src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'web/tsconfig.json' },
    // The generated API types are read, not followed (a large file of types only).
    exclude: { path: '^web/src/api/schema\\.d\\.ts$' },
  },
};
