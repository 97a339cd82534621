import { betterWay, flatten, formatTable, median, summarise } from './compare-figures';

describe('benchmark figures compared side by side', () => {
  it('names every number by its path, rows by their text members, whatever their order', () => {
    const run1 = {
      date: 'x',
      rows: [
        { topology: 'standalone', connections: 8, requests_per_s: 500, p50_ms: 13 },
        { topology: 'distributed', connections: 8, requests_per_s: 400, p50_ms: 17 },
      ],
    };
    const run2 = {
      date: 'y',
      rows: [
        { topology: 'distributed', connections: 8, requests_per_s: 410, p50_ms: 16 },
        { topology: 'standalone', connections: 8, requests_per_s: 520, p50_ms: 12 },
      ],
    };
    expect(flatten(run1)).toEqual({
      'rows[topology=standalone,connections=8].requests_per_s': 500,
      'rows[topology=standalone,connections=8].p50_ms': 13,
      'rows[topology=distributed,connections=8].requests_per_s': 400,
      'rows[topology=distributed,connections=8].p50_ms': 17,
    });
    expect(flatten(run2)['rows[topology=standalone,connections=8].requests_per_s']).toBe(520);
  });

  it("matches rows by their connection count: an older run's one row at 16 pairs with the newer run's row at 16, not at 1", () => {
    const older = { rows: [{ endpoint: 'POST /find', connections: 16, p50_ms: 500 }] };
    const newer = {
      rows: [
        { endpoint: 'POST /find', connections: 1, p50_ms: 25 },
        { endpoint: 'POST /find', connections: 16, p50_ms: 400 },
      ],
    };
    const key = 'rows[endpoint=POST /find,connections=16].p50_ms';
    expect(flatten(older)[key]).toBe(500);
    expect(flatten(newer)[key]).toBe(400);
    expect(flatten(newer)['rows[endpoint=POST /find,connections=1].p50_ms']).toBe(25);
  });

  it('keeps nested objects, numeric arrays by index, and tells repeated labels apart', () => {
    expect(
      flatten({
        micro: { verify_us: 3 },
        xs: [1, 2],
        rows: [
          { k: 'a', v: 1 },
          { k: 'a', v: 2 },
        ],
        nan: Number.NaN,
      }),
    ).toEqual({
      'micro.verify_us': 3,
      'xs[0]': 1,
      'xs[1]': 2,
      'rows[k=a].v': 1,
      'rows[k=a#2].v': 2,
    });
  });

  it('pairs round i of A with round i of B and reports the median ratio with its spread', () => {
    const a = [
      { r: 100, same: 5 },
      { r: 200, same: 5 },
      { r: 100, same: 5 },
    ];
    const b = [
      { r: 110, same: 5 },
      { r: 180, same: 5 },
      { r: 150, same: 5 },
    ];
    const [row, ...others] = summarise(a, b);
    expect(others).toEqual([]); // a figure equal in every run measures nothing
    expect(row).toMatchObject({ figure: 'r', a: 100, b: 150, ratio: 1.1, min: 0.9, max: 1.5 });
  });

  it('leaves out a figure some run lacks, and survives zeros', () => {
    const rows = summarise(
      [
        { x: 1, e: 0 },
        { e: 0, x: 2 },
      ],
      [{ x: 2, e: 1 }, { e: 0 }],
    );
    expect(rows.map((r) => r.figure)).toEqual(['e']);
    expect(rows[0]!.max).toBe(Number.POSITIVE_INFINITY);
  });

  it('guesses which way is better from the name', () => {
    expect(betterWay('rows[topology=standalone].requests_per_s')).toBe('higher');
    expect(betterWay('rows[x=y].p99_ms')).toBe('lower');
    expect(betterWay('dev.ndcg_at_10')).toBe('higher');
    expect(betterWay('something')).toBe('?');
    expect(median([3, 1, 2, 10])).toBe(2.5);
  });

  it('prints one aligned line per figure', () => {
    const text = formatTable(summarise([{ p50_ms: 10 }], [{ p50_ms: 12 }]));
    expect(text.split('\n')).toHaveLength(2);
    expect(text).toContain('1.20×');
  });
});
