import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { AccountsSubjects, ContentSubjects, ReportingSubjects, UnderstandingSubjects, type AnyDef } from '@kb/contracts';

/** How an app's code uses a subject. */
export type Use = 'request' | 'handle' | 'publish' | 'receive';

const METHOD_USE: Record<string, Use> = {
  request: 'request',
  requestStream: 'request',
  handle: 'handle',
  handleStream: 'handle',
  publish: 'publish',
  enqueue: 'publish',
  subscribe: 'receive',
  consume: 'receive',
  publishLive: 'publish',
  subscribeLive: 'receive',
};
const GROUPS: Record<string, Record<string, AnyDef>> = {
  AccountsSubjects,
  ContentSubjects,
  ReportingSubjects,
  UnderstandingSubjects,
} as never;

export interface SubjectUse {
  use: Use;
  def: AnyDef;
  /** Where, for the failure message. */
  at: string;
}

/**
 * Every bus use in the sources under `dir`, read from the syntax tree: calls of the bus methods
 * with a `<Group>Subjects.<name>` definition (also through an alias such as `const S = ContentSubjects`),
 * batchers (`new AuditPublisher(bus, <Group>Subjects.<name>, …)`), and outbox entries (`target: <Group>Subjects.<name>.subject`, `outboxEvent(<Group>Subjects.<name>, …)`),
 * which the outbox later publishes.
 */
export function busUses(dir: string): SubjectUse[] {
  const uses: SubjectUse[] = [];
  for (const file of sourceFiles(dir)) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const aliases = new Map<string, string>();
    const defOf = (node: ts.Node): AnyDef | undefined => {
      if (!ts.isPropertyAccessExpression(node) || !ts.isIdentifier(node.expression)) return undefined;
      const group = GROUPS[aliases.get(node.expression.text) ?? node.expression.text];
      return group?.[node.name.text];
    };
    const at = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const visit = (node: ts.Node): void => {
      if (
        ts.isVariableDeclaration(node) &&
        ts.isIdentifier(node.name) &&
        node.initializer &&
        ts.isIdentifier(node.initializer) &&
        GROUPS[node.initializer.text]
      ) {
        aliases.set(node.name.text, node.initializer.text);
      }
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.arguments[0]) {
        const use = METHOD_USE[node.expression.name.text];
        const def = defOf(node.arguments[0]);
        if (use && def) uses.push({ use, def, at: at(node) });
      }
      // A batcher that publishes on the subject it is built with: `new AuditPublisher(bus, <Group>Subjects.<name>, …)`.
      if (
        ts.isNewExpression(node) &&
        ts.isIdentifier(node.expression) &&
        node.expression.text === 'AuditPublisher' &&
        node.arguments?.[1]
      ) {
        const def = defOf(node.arguments[1]);
        if (def) uses.push({ use: 'publish', def, at: at(node) });
      }
      // An event an outbox stores with the write and publishes after commit: `outboxEvent(<Group>Subjects.<name>, payload)`.
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'outboxEvent' && node.arguments[0]) {
        const def = defOf(node.arguments[0]);
        if (def) uses.push({ use: 'publish', def, at: at(node) });
      }
      if (
        ts.isPropertyAssignment(node) &&
        ts.isIdentifier(node.name) &&
        node.name.text === 'target' &&
        ts.isPropertyAccessExpression(node.initializer) &&
        node.initializer.name.text === 'subject'
      ) {
        const def = defOf(node.initializer.expression);
        if (def) uses.push({ use: 'publish', def, at: at(node) });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return uses;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !/\.(spec|int-spec|e2e-spec)\.ts$/.test(entry.name) ? [path] : [];
  });
}

/** NATS subject matching: `*` is one token, `>` one or more trailing tokens. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}
