import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('./src/', import.meta.url));
const NODE_MODULES = /[\\/]node_modules[\\/]/;
const ROUTER = /[\\/]node_modules[\\/](react-router|cookie|set-cookie-parser)[\\/]/;
const SHARED = /[\\/]web[\\/]src[\\/](lib|components|api)[\\/]/;
const FEATURES = /[\\/]web[\\/]src[\\/]features[\\/]/;

type ModuleInfo = { importedIds: readonly string[] } | null;
interface Graph {
  getModuleInfo(id: string): ModuleInfo;
}

/** The modules `from` imports statically, directly or not (itself included). */
function staticClosure(graph: Graph, from: string): Set<string> {
  const seen = new Set<string>();
  const stack = [from];
  while (stack.length) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    stack.push(...(graph.getModuleInfo(id)?.importedIds ?? []));
  }
  return seen;
}

// Per chunking pass (its module records are reused within one pass).
const closures = new WeakMap<object, { entry: Set<string>; app: Set<string> }>();

/**
 * The application's own modules that the app (router, menu, table of screens: app/App.tsx) needs,
 * and the shared ones (lib/, components/, api/), unless the login needs them (main.tsx's static
 * imports): one file, fetched after the login.
 */
function appOnly(id: string, graph: Graph): boolean {
  const key = graph.getModuleInfo(`${SRC}main.tsx`);
  if (!key || !id.startsWith(SRC)) return false;
  let parts = closures.get(key);
  if (!parts) {
    parts = { entry: staticClosure(graph, `${SRC}main.tsx`), app: staticClosure(graph, `${SRC}app/App.tsx`) };
    closures.set(key, parts);
  }
  return (parts.app.has(id) || SHARED.test(id)) && !parts.entry.has(id);
}

// The single-page application, built into web/dist and served by the Express server at `/`.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline script anywhere: the pages run under `script-src 'self'`.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: 'es2022',
    reportCompressedSize: false,
    // The manifest (web/dist/.vite/manifest.json, not served): which file holds which module
    // (test/web/script-split.test.ts reads it).
    manifest: true,
    rolldownOptions: {
      // React Query's "use client" markers mean nothing in a client-only bundle.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
      output: {
        // The libraries apart from the application's code, which changes more often: `vendor`, what the
        // login already needs (React, TanStack Query, the API client); `router`, what the app needs
        // after it (React Router). The app and each screen are files of their own by their dynamic
        // imports (main.tsx, app/screens.tsx); BENCHMARKS.md, "The script, split (issue 29 point 6)".
        codeSplitting: {
          groups: [
            { name: 'vendor', test: (id) => NODE_MODULES.test(id) && !ROUTER.test(id), priority: 4 },
            { name: 'router', test: ROUTER, priority: 3 },
            // Their dependencies stay where they are (the login's modules in the first file).
            { name: (id, graph) => (appOnly(id, graph) ? 'app' : null), debugName: 'app', priority: 2, includeDependenciesRecursively: false },
            { name: 'features', test: FEATURES, minShareCount: 2, priority: 1, includeDependenciesRecursively: false },
          ],
        },
      },
    },
  },
});
