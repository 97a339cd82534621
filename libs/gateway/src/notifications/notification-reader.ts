/** What a notification reader writes to: the HTTP response (a test hands in a fake). */
export interface LineSink {
  write(chunk: string): boolean;
  end(chunk?: string): unknown;
  once(event: 'drain', listener: () => void): unknown;
  destroy(): unknown;
  readonly writableFinished: boolean;
}

export type CloseReason = 'slow_reader' | 'max_duration' | 'shutdown';

/** A stream line: base64 of the JSON notification, as the reference's notifications endpoint sends. */
export function notificationLine(value: { type: string; data: Record<string, unknown> }): string {
  return `${Buffer.from(JSON.stringify(value)).toString('base64')}\n`;
}

export interface ReaderOptions {
  /** Lines held here while the connection does not take more; one more and the reader is dropped. */
  maxPending: number;
  heartbeatMs: number;
  maxDurationMs: number;
  /** A dropped reader whose connection has not taken its final message by then is cut. */
  dropGraceMs: number;
}

/**
 * One notifications stream. Lines go straight to the connection while it takes them; while it is
 * full, at most `maxPending` wait here, and a reader that falls further behind is dropped with a
 * final `{"type":"closed","data":{"reason":"slow_reader"}}` line: memory per reader stays bounded.
 */
export class NotificationReader {
  private readonly pending: string[] = [];
  private blocked = false;
  private done = false;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly sink: LineSink,
    private readonly options: ReaderOptions,
    private readonly onEnd: () => void,
  ) {
    this.timers.push(setInterval(() => this.push(notificationLine({ type: 'heartbeat', data: {} })), options.heartbeatMs));
    this.timers.push(setTimeout(() => this.close('max_duration'), options.maxDurationMs));
  }

  get closed(): boolean {
    return this.done;
  }

  push(line: string): void {
    if (this.done) return;
    if (this.blocked) {
      if (this.pending.length >= this.options.maxPending) return this.close('slow_reader');
      this.pending.push(line);
      return;
    }
    if (!this.sink.write(line)) this.waitDrain();
  }

  /** Ends the stream with its final message (reason why). */
  close(reason: CloseReason): void {
    if (this.done) return;
    this.finish();
    this.sink.end(notificationLine({ type: 'closed', data: { reason } }));
    if (reason === 'slow_reader') {
      // The final line waits behind everything the reader has not read; it is not kept forever.
      const cut = setTimeout(() => {
        if (!this.sink.writableFinished) this.sink.destroy();
      }, this.options.dropGraceMs);
      cut.unref();
    }
  }

  /** The client went away: nothing more is written. */
  abandon(): void {
    if (!this.done) this.finish();
  }

  private finish(): void {
    this.done = true;
    this.pending.length = 0;
    for (const t of this.timers) clearTimeout(t);
    this.onEnd();
  }

  private waitDrain(): void {
    this.blocked = true;
    this.sink.once('drain', () => this.flush());
  }

  private flush(): void {
    this.blocked = false;
    while (!this.done && this.pending.length > 0) {
      const line = this.pending.shift() as string;
      if (!this.sink.write(line)) return this.waitDrain();
    }
  }
}
