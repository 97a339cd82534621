/**
 * Typed reading of environment variables. Only `main.ts` files call these: root modules never
 * read `process.env` (they receive configuration objects).
 */
export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** Collects problems instead of failing on the first, so an operator sees all of them at once. */
export class EnvReader {
  private readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  string(name: string, fallback?: string): string {
    const value = this.env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback === undefined) {
      this.problems.push(`${name} is required`);
      return '';
    }
    return fallback;
  }

  optional(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value === '' ? undefined : value;
  }

  int(name: string, fallback: number, range: { min?: number; max?: number } = {}): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value)) {
      this.problems.push(`${name} must be an integer, got "${raw}"`);
      return fallback;
    }
    if ((range.min !== undefined && value < range.min) || (range.max !== undefined && value > range.max)) {
      this.problems.push(`${name} must be between ${range.min ?? '-∞'} and ${range.max ?? '∞'}, got ${value}`);
      return fallback;
    }
    return value;
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
    this.problems.push(`${name} must be a boolean (true/false), got "${raw}"`);
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
      return fallback;
    }
    return raw as T;
  }

  list(name: string, fallback: string[] = []): string[] {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }

  url(name: string, fallback?: string): string {
    const value = fallback === undefined ? this.string(name) : this.string(name, fallback);
    if (value) {
      try {
        new URL(value);
      } catch {
        this.problems.push(`${name} must be a URL, got "${value}"`);
      }
    }
    return value;
  }

  /** Throws one ConfigError listing every problem found so far. */
  done(): void {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }
}
