/**
 * Responders of one subject, grouped like NATS queue groups: every group gets each request,
 * and inside a group members take turns.
 */
export class HandlerGroups<H> {
  private readonly bySubject = new Map<string, Map<string, { members: H[]; next: number }>>();

  add(subject: string, group: string, handler: H): void {
    const groups = this.bySubject.get(subject) ?? new Map<string, { members: H[]; next: number }>();
    const entry = groups.get(group) ?? { members: [], next: 0 };
    entry.members.push(handler);
    groups.set(group, entry);
    this.bySubject.set(subject, groups);
  }

  /** One member per group, rotating; empty when nobody answers the subject. */
  pick(subject: string): H[] {
    const picked: H[] = [];
    for (const entry of this.bySubject.get(subject)?.values() ?? []) {
      const member = entry.members[entry.next % entry.members.length];
      entry.next = (entry.next + 1) % entry.members.length;
      if (member !== undefined) picked.push(member);
    }
    return picked;
  }

  clear(): void {
    this.bySubject.clear();
  }
}
