// dns2 ships no types; this covers the part the fake DNS server uses.
declare module 'dns2' {
  import type { AddressInfo } from 'node:net';

  interface Question {
    name: string;
    type: number;
    class: number;
  }
  interface Answer {
    name: string;
    type: number;
    class: number;
    ttl: number;
    data?: string | string[];
  }

  export class Packet {
    static TYPE: Record<'A' | 'TXT' | 'AAAA' | 'CNAME' | 'MX', number>;
    static CLASS: Record<'IN', number>;
    static createResponseFromRequest(request: Packet): Packet;
    header: { id: number; rcode: number; [k: string]: unknown };
    questions: Question[];
    answers: Answer[];
  }

  export class UDPServer {
    constructor(options?: { type: 'udp4' | 'udp6' });
    on(event: 'request', listener: (request: Packet, send: (response: Packet) => Promise<unknown>) => void): this;
    on(event: 'requestError' | 'error', listener: (err: Error) => void): this;
    listen(port: number, address: string): Promise<void>;
    address(): AddressInfo;
    close(callback?: () => void): void;
  }
}
