/**
 * The faults, spread evenly over the run in a shuffled order: PostgreSQL restarts (fast and
 * immediate shutdown, alternately), SIGKILLs of the service (respawned at once),
 * pg_terminate_backend of the service's backends, and the connection limit exhausted for a
 * few seconds. After each, the time until the service answers a request through its SQL path
 * again (the service is not restarted for database faults: same pid).
 */
import type { Cluster } from './cluster.js';
import type { Service } from './service.js';

export type FaultKind = 'restart-fast' | 'restart-immediate' | 'kill' | 'terminate' | 'exhaust';

export interface FaultRecord {
  kind: FaultKind;
  at: string;
  /** Milliseconds the database (or the service, for a kill) was away. */
  outageMs: number;
  /** From the database (or the respawned service) being back to the first answered request. */
  recoveryMs: number;
  detail: string;
}

/** After a fault, answers may still carry its 503 for a moment (requests that started during it). */
const OUTAGE_GRACE_MS = 5_000;
/** A recovery slower than this fails the run ("within seconds"). */
export const RECOVERY_LIMIT_MS = 10_000;
const EXHAUSTION_HOLD_MS = 3_000;

export class Faults {
  readonly records: FaultRecord[] = [];
  readonly problems: string[] = [];
  private outageUntil = 0;

  constructor(
    private readonly cluster: Cluster,
    private readonly service: Service,
    private readonly probe: () => Promise<boolean>,
  ) {}

  /** True while a fault is under way and for a few seconds after. */
  readonly inOutage = (): boolean => Date.now() < this.outageUntil;

  plan(counts: { restarts: number; kills: number; terminations: number; exhaustions: number }, random: () => number): FaultKind[] {
    const kinds: FaultKind[] = [
      ...Array.from({ length: counts.restarts }, (_, i): FaultKind => (i % 2 ? 'restart-immediate' : 'restart-fast')),
      ...Array<FaultKind>(counts.kills).fill('kill'),
      ...Array<FaultKind>(counts.terminations).fill('terminate'),
      ...Array<FaultKind>(counts.exhaustions).fill('exhaust'),
    ];
    for (let i = kinds.length - 1; i > 0; i -= 1) {
      const j = Math.floor(random() * (i + 1));
      [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
    }
    return kinds;
  }

  /** Runs `kinds` spread over [start, end): one slot each, the fault at the start of its slot. */
  async run(kinds: FaultKind[], start: number, end: number): Promise<void> {
    const slot = (end - start) / Math.max(1, kinds.length);
    for (const [i, kind] of kinds.entries()) {
      const at = start + slot * i + slot * 0.3;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
      try {
        await this.inject(kind);
      } catch (error) {
        this.problems.push(`${kind}: ${(error as Error).message}`);
      }
    }
  }

  /** Polls the SQL path every 25 ms; the milliseconds until it answers (or the limit, recorded as a problem). */
  private async recovery(kind: FaultKind): Promise<number> {
    const started = Date.now();
    while (!(await this.probe())) {
      if (this.service.pid === null) {
        // It crashed (recorded by Service as an unexpected exit, which fails the run): respawned
        // so that the run goes on.
        this.problems.push(`${kind}: the service exited; respawned`);
        this.service.spawn();
      }
      if (Date.now() - started > 60_000) {
        this.problems.push(`${kind}: the service did not answer within 60 s`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return Date.now() - started;
  }

  private async inject(kind: FaultKind): Promise<void> {
    const at = new Date().toISOString();
    const pid = this.service.pid;
    this.outageUntil = Number.POSITIVE_INFINITY;
    const faultStart = Date.now();
    let detail = '';
    try {
      if (kind === 'kill') {
        await this.service.kill();
        this.service.spawn();
        const ready = await this.service.waitReady();
        detail = `respawned, ready after ${ready} ms`;
      } else if (kind === 'restart-fast' || kind === 'restart-immediate') {
        await this.cluster.restart(kind === 'restart-fast' ? 'fast' : 'immediate');
      } else if (kind === 'terminate') {
        detail = `${await this.cluster.terminateServiceBackends()} backend(s) terminated`;
      } else {
        detail = `${await this.cluster.exhaustConnections(EXHAUSTION_HOLD_MS)} connection(s) held ${EXHAUSTION_HOLD_MS} ms`;
      }
      const back = Date.now();
      const recoveryMs = await this.recovery(kind);
      if (kind !== 'kill' && this.service.pid !== pid) this.problems.push(`${kind}: the service was restarted (pid ${pid} → ${this.service.pid})`);
      if (kind !== 'kill' && recoveryMs > RECOVERY_LIMIT_MS) this.problems.push(`${kind}: recovery took ${recoveryMs} ms`);
      this.records.push({ kind, at, outageMs: back - faultStart, recoveryMs, detail });
    } finally {
      this.outageUntil = Date.now() + OUTAGE_GRACE_MS;
    }
  }
}
