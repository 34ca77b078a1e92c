/**
 * Options of `npm run chaos` (bench/chaos.ts). Chaos mode spreads the faults over the run;
 * --soak runs the same workload at a steady rate without faults and samples the server.
 */
export interface ChaosOptions {
  /** Seconds of workload. */
  duration: number;
  restarts: number;
  kills: number;
  terminations: number;
  exhaustions: number;
  soak: boolean;
  /** Requests per second of the soak (steady); chaos mode runs its users back to back. */
  rate: number;
  /** Virtual users (employees filing; two managers decide in parallel besides). */
  users: number;
  output: string | null;
  seed: number;
}

const DEFAULTS: ChaosOptions = {
  duration: 90,
  restarts: 3,
  kills: 1,
  terminations: 1,
  exhaustions: 1,
  soak: false,
  rate: 20,
  users: 8,
  output: null,
  seed: 1,
};

const USAGE =
  'usage: npm run chaos -- [--duration=S] [--restarts=N] [--kills=N] [--terminations=N] [--exhaustions=N] ' +
  '[--users=N] [--seed=N] [--output=FILE] [--soak [--rate=R]]';

export function parseOptions(argv: string[]): ChaosOptions {
  const options = { ...DEFAULTS };
  const counts = ['duration', 'restarts', 'kills', 'terminations', 'exhaustions', 'rate', 'users', 'seed'] as const;
  for (const arg of argv) {
    const [name, value] = arg.replace(/^--/, '').split('=', 2) as [string, string | undefined];
    if (name === 'soak' && value === undefined) {
      options.soak = true;
    } else if (name === 'output' && value) {
      options.output = value;
    } else if ((counts as readonly string[]).includes(name) && value !== undefined && /^\d+$/.test(value)) {
      options[name as (typeof counts)[number]] = Number(value);
    } else {
      throw new Error(`unknown or malformed option ${arg}\n${USAGE}`);
    }
  }
  if (options.duration < 10) throw new Error('--duration: at least 10 seconds');
  if (options.users < 1 || options.rate < 1) throw new Error('--users and --rate: at least 1');
  if (options.soak) {
    options.restarts = 0;
    options.kills = 0;
    options.terminations = 0;
    options.exhaustions = 0;
  }
  return options;
}
