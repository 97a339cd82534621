import { createTransport, type Transporter } from 'nodemailer';

export interface InviteMail {
  to: string;
  target: string;
  role: string;
  link: string;
  expires: Date;
}

/** Sends invitation mails over SMTP. One transport per process, created on first use. */
export class InviteMailer {
  private transport?: Transporter;

  constructor(private readonly smtp: { url: string; from: string }) {}

  async send(mail: InviteMail): Promise<void> {
    this.transport ??= createTransport(this.smtp.url);
    await this.transport.sendMail({
      from: this.smtp.from,
      to: mail.to,
      subject: `You are invited to ${mail.target}`,
      text:
        `You have been invited to ${mail.target} with the role ${mail.role}.\n\n` +
        `Accept the invitation (sign in or create an account with this e-mail address):\n${mail.link}\n\n` +
        `The link expires on ${mail.expires.toISOString()}.\n`,
    });
  }

  close(): void {
    this.transport?.close();
  }
}
