export interface HealthCheck {
  name: string;
  check(): Promise<boolean>;
}

export interface HealthReport {
  status: 'ok' | 'error';
  checks: Record<string, 'up' | 'down'>;
}

/** Runs every check with a time limit: a hanging dependency counts as down. */
export async function runHealthChecks(checks: HealthCheck[], timeoutMs = 2000): Promise<HealthReport> {
  const results = await Promise.all(
    checks.map(async (c) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const ok = await Promise.race([
          c.check(),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), timeoutMs);
          }),
        ]);
        return [c.name, ok ? 'up' : 'down'] as const;
      } catch {
        return [c.name, 'down'] as const;
      } finally {
        if (timer) clearTimeout(timer);
      }
    }),
  );
  const out: Record<string, 'up' | 'down'> = {};
  for (const [name, state] of results) out[name] = state;
  return { status: results.every(([, s]) => s === 'up') ? 'ok' : 'error', checks: out };
}
