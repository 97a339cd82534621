import { HandlerGroups } from './handler-groups';

describe('HandlerGroups', () => {
  it('rotates inside a group and picks one member of every group', () => {
    const groups = new HandlerGroups<string>();
    groups.add('a.b', 'a', 'a1');
    groups.add('a.b', 'a', 'a2');
    groups.add('a.b', 'audit', 'x1');
    expect([groups.pick('a.b'), groups.pick('a.b'), groups.pick('a.b')]).toEqual([
      ['a1', 'x1'],
      ['a2', 'x1'],
      ['a1', 'x1'],
    ]);
    expect(groups.pick('nobody')).toEqual([]);
  });
});
