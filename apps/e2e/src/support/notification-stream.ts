import type { Credential, HttpClient } from './http-client';

export type Notification = { type: string; data: Record<string, unknown> };

/** A notifications stream read line by line: each line base64 of a JSON notification. */
export class NotificationStream {
  readonly seen: Notification[] = [];
  private ended = false;

  private constructor(
    readonly status: number,
    private readonly controller: AbortController,
  ) {}

  static async open(http: HttpClient, kbid: string, credential: Credential): Promise<NotificationStream> {
    const controller = new AbortController();
    const res = await fetch(`${http.baseUrl}/api/v1/kb/${kbid}/notifications`, {
      headers: credential ? { [credential.header]: credential.value } : {},
      signal: controller.signal,
    });
    const stream = new NotificationStream(res.status, controller);
    if (res.status !== 200 || !res.body) {
      await res.text();
      stream.ended = true;
      return stream;
    }
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    void stream.read(res.body);
    // The first line (a heartbeat) says the subscription is live.
    await stream.until((s) => s.length > 0, 'the first line');
    return stream;
  }

  async until(done: (seen: Notification[]) => boolean, what: string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this.seen)) {
      if (Date.now() > deadline || (this.ended && !done(this.seen)))
        throw new Error(
          `notifications: timed out waiting for ${what}; seen ${JSON.stringify(this.seen.filter((n) => n.type !== 'heartbeat'))}`,
        );
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  close(): void {
    this.controller.abort();
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line) this.seen.push(JSON.parse(Buffer.from(line, 'base64').toString('utf8')) as Notification);
        }
      }
    } catch {
      // aborted
    } finally {
      this.ended = true;
    }
  }
}

/** The types of the notifications of one resource, in order. */
export const of = (rid: string) => (seen: Notification[]) => seen.filter((n) => n.data['resource_uuid'] === rid).map((n) => n.type);
