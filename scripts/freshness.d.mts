/** Types of scripts/freshness.mjs (plain JavaScript, run before anything is compiled). */
export declare const ROOT: string;
export interface BuildSpec {
  label: string;
  output: string;
  sources: string[];
  tools: string[];
  assets?: string[];
}
export declare const BUILDS: { server: BuildSpec; web: BuildSpec };
export type BuildName = keyof typeof BUILDS;
export declare function newestMtime(entry: string): Promise<number>;
export declare function isStale(output: string, sources: string[], root?: string): Promise<boolean>;
export declare function hasTool(name: string, root?: string): boolean;
export declare function build(name: BuildName, root?: string): void;
export declare function ensureBuilt(
  name: BuildName,
  options?: { root?: string; log?: (line: string) => void },
): Promise<'fresh' | 'built' | 'kept'>;
