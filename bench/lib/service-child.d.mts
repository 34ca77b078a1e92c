/** Types of bench/lib/service-child.mjs (plain JavaScript: the compiled bench child runs without tsx). */
export declare function serveBenchChild(service: {
  loadConfig: (env: NodeJS.ProcessEnv, overrides: { port: number }) => unknown;
  createApp: (config: never) => Promise<{ listen(port: number, host: string): Promise<{ url: string; close(): Promise<void> }> }>;
}): Promise<void>;
