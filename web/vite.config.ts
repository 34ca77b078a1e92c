import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('./src/', import.meta.url));
const NODE_MODULES = /[\\/]node_modules[\\/]/;
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
const closures = new WeakMap<object, { login: Set<string>; app: Set<string> }>();

/**
 * Which part of the application a module belongs to: `login`, what main.tsx imports statically (the
 * first screen); `app`, what app/App.tsx (router, menu, table of screens) imports statically and the
 * login does not; anything else is loaded with the screens that import it.
 */
function partOf(id: string, graph: Graph): 'login' | 'app' | null {
  const key = graph.getModuleInfo(`${SRC}main.tsx`);
  if (!key) return null;
  let parts = closures.get(key);
  if (!parts) {
    parts = { login: staticClosure(graph, `${SRC}main.tsx`), app: staticClosure(graph, `${SRC}app/App.tsx`) };
    closures.set(key, parts);
  }
  if (parts.login.has(id)) return 'login';
  return parts.app.has(id) ? 'app' : null;
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
        // BENCHMARKS.md, "The script, split (issue 29 point 6)". The app (main.tsx) and each screen
        // (app/screens.tsx) are imported on demand; these groups place the modules in files:
        codeSplitting: {
          groups: [
            // The libraries the login needs (React, TanStack Query, openapi-fetch): apart from the
            // application's code, which changes more often.
            { name: (id, graph) => (NODE_MODULES.test(id) && partOf(id, graph) === 'login' ? 'vendor' : null), debugName: 'vendor', priority: 4 },
            // Those the app needs after the login (React Router). A library only some screens use
            // stays out of both, loaded with those screens.
            { name: (id, graph) => (NODE_MODULES.test(id) && partOf(id, graph) === 'app' ? 'router' : null), debugName: 'router', priority: 3 },
            // The app's own code and the shared code (lib/, components/, api/) that the login does not
            // need: one file, after the login. Dependencies stay where they are (the login's in its file).
            {
              name: (id, graph) => (id.startsWith(SRC) && partOf(id, graph) !== 'login' && (partOf(id, graph) === 'app' || SHARED.test(id)) ? 'app' : null),
              debugName: 'app', priority: 2, includeDependenciesRecursively: false,
            },
            // Feature code shared by several screens: one file.
            { name: 'features', test: FEATURES, minShareCount: 2, priority: 1, includeDependenciesRecursively: false },
          ],
        },
      },
    },
  },
});
