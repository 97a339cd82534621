import { createTransport, type Transporter } from 'nodemailer';

/** Sends e-mail verification links over SMTP. One transport per process, created on first use. */
export class VerificationMailer {
  private transport?: Transporter;

  constructor(private readonly smtp: { url: string; from: string }) {}

  async send(mail: { to: string; link: string; expires: Date }): Promise<void> {
    this.transport ??= createTransport(this.smtp.url);
    await this.transport.sendMail({
      from: this.smtp.from,
      to: mail.to,
      subject: 'Confirm your e-mail address',
      text:
        `Someone (hopefully you) gave this address to the Knowledge Box Service.\n\n` +
        `Open this link to confirm that it is yours:\n${mail.link}\n\n` +
        `The link expires on ${mail.expires.toISOString()}. If this was not you, ignore this mail.\n`,
    });
  }

  close(): void {
    this.transport?.close();
  }
}
