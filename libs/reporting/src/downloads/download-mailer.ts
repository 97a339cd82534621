import { createTransport, type Transporter } from 'nodemailer';

/** Tells the address a download was requested for that its file is ready. One SMTP transport per process, made on first use. */
export class DownloadMailer {
  private transport?: Transporter;

  constructor(private readonly smtp: { url: string; from: string }) {}

  async send(mail: { to: string; eventType: string; month: string; link: string; expires: Date; records: number }): Promise<void> {
    this.transport ??= createTransport(this.smtp.url);
    await this.transport.sendMail({
      from: this.smtp.from,
      to: mail.to,
      subject: `Your activity log download is ready (${mail.eventType}, ${mail.month})`,
      text:
        `The activity log download you asked for is ready: ${mail.records} ${mail.eventType} records of ${mail.month}.\n\n` +
        `Download it here:\n${mail.link}\n\n` +
        `This link works until ${mail.expires.toISOString()}; Get Download Status gives a fresh one while the file is kept (7 days).\n`,
    });
  }

  close(): void {
    this.transport?.close();
  }
}
