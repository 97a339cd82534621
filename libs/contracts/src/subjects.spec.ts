import { validatePayload } from './common/validation';
import { ALL_SUBJECTS } from './subjects';
import { SUBJECT_EXAMPLES } from './subjects.examples';

describe('subjects', () => {
  it('are unique', () => {
    const names = ALL_SUBJECTS.map((d) => d.subject);
    expect(new Set(names).size).toBe(names.length);
  });

  it('follow <service>.<entity>.<verb> naming', () => {
    for (const def of ALL_SUBJECTS) expect(def.subject).toMatch(/^(accounts|content|understanding|reporting)\.[a-z-]+\.[a-z-]+(\.v\d+)?$/);
  });

  it('match the committed snapshot (a change here is a contract change)', () => {
    expect(ALL_SUBJECTS.map((d) => `${d.kind} ${d.subject}${'stream' in d ? ` [${d.stream}]` : ''}`).sort()).toMatchSnapshot();
  });

  it.each(ALL_SUBJECTS.map((d) => [d.subject, d] as const))('%s has a valid example payload', (subject, def) => {
    const example = SUBJECT_EXAMPLES[subject];
    expect(example).toBeDefined();
    const cls = def.kind === 'rpc' || def.kind === 'stream' ? def.request : def.payload;
    expect(cls).toBeDefined();
    if (cls) expect(() => validatePayload(cls, example)).not.toThrow();
  });

  it('rejects a broken example', () => {
    const def = ALL_SUBJECTS.find((d) => d.subject === 'content.resource.create');
    const cls = def && def.kind === 'rpc' ? def.request : undefined;
    expect(() => cls && validatePayload(cls, { kbid: 'kb', body: { texts: { 'bad id!': { body: 'x' } }, title: 5 } })).toThrow(
      /title|texts/,
    );
  });
});
