/** A Dockerfile as stages of instructions (line continuations joined, comments dropped). */
export interface Stage {
  from: string;
  name?: string;
  instructions: { op: string; args: string }[];
}

export function parseDockerfile(text: string): { args: Map<string, string>; stages: Stage[] } {
  const lines = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of lines) {
    const [op = '', ...rest] = line.split(/\s+/);
    const rawArgs = rest.join(' ');
    const upper = op.toUpperCase();
    if (upper === 'FROM') {
      const m = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rawArgs);
      if (!m) throw new Error(`cannot read FROM ${rawArgs}`);
      const image = (m[1] as string).replace(/^\$\{?(\w+)\}?$/, (_, name: string) => args.get(name) ?? `$${name}`);
      stages.push({ from: image, ...(m[2] ? { name: m[2] } : {}), instructions: [] });
    } else if (upper === 'ARG' && stages.length === 0) {
      const [name, value = ''] = rawArgs.split('=');
      args.set(name as string, value);
    } else {
      const stage = stages[stages.length - 1];
      if (!stage) throw new Error(`${op} before FROM`);
      stage.instructions.push({ op: upper, args: rawArgs });
    }
  }
  return { args, stages };
}

/** What the spec asks of the image; an empty list when it complies. */
export function lintDockerfile(text: string): string[] {
  const { stages } = parseDockerfile(text);
  const problems: string[] = [];
  const names = new Set(stages.flatMap((s) => (s.name ? [s.name] : [])));
  for (const stage of stages) {
    if (names.has(stage.from)) continue;
    if (!/^[\w./-]+(:[\w.-]+)?@sha256:[0-9a-f]{64}$/.test(stage.from)) problems.push(`base image ${stage.from} is not pinned by digest`);
  }
  const final = stages[stages.length - 1];
  if (!final) return ['no stage'];
  const users = final.instructions.filter((i) => i.op === 'USER');
  const user = users[users.length - 1]?.args.split(':')[0];
  if (!user) problems.push('the final stage sets no USER (it would run as root)');
  else if (user === 'root' || user === '0') problems.push('the final stage runs as root');
  else if (!/^\d+$/.test(user)) problems.push('USER must be numeric, so Kubernetes can check runAsNonRoot');
  const runs = final.instructions.filter((i) => i.op === 'RUN').map((i) => i.args);
  if (runs.some((r) => /\bnpm\s+(ci|install|i)\b/.test(r) && !/--omit=dev|--production/.test(r)))
    problems.push('the final stage installs development dependencies');
  if (!runs.some((r) => /apt-get install[^&]*\bffmpeg\b/.test(r))) problems.push('the final stage does not install ffmpeg');
  // node_modules reaches the final stage only from a stage that pruned the development dependencies.
  for (const copy of final.instructions.filter((i) => i.op === 'COPY' && /node_modules/.test(i.args))) {
    const from = /--from=(\S+)/.exec(copy.args)?.[1];
    const source = stages.find((s) => s.name === from);
    if (!source) problems.push(`node_modules copied from ${from ?? 'the build context'}`);
    else if (!source.instructions.some((i) => i.op === 'RUN' && /npm prune --omit=dev|npm ci [^&]*--omit=dev/.test(i.args)))
      problems.push(`stage ${from} keeps its development dependencies`);
  }
  return problems;
}
