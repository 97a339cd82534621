import { deriveResourceStatus } from './resource-status';

describe('deriveResourceStatus', () => {
  it.each([
    [[], 'PROCESSED'],
    [['PROCESSED', 'PROCESSED'], 'PROCESSED'],
    [['PROCESSED', 'PENDING'], 'PENDING'],
    [['PENDING', 'ERROR'], 'ERROR'],
  ] as const)('%j → %s', (statuses, expected) => {
    expect(deriveResourceStatus([...statuses])).toBe(expected);
  });
});
