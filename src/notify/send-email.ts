/**
 * A mail through nodemailer to the channel's SMTP server: `smtp://` (STARTTLS when the server
 * offers it) or `smtps://` (TLS from the start), every wait cut off at the timeout.
 */
import { DeliveryError } from './delivery-error.js';
import { hostAllowed } from './host-policy.js';

export interface MailMessage {
  subject: string;
  text: string;
  /** The Message-ID, stable across attempts so a mail reader can tell a repeat. */
  messageId: string;
}

export interface SmtpSettings {
  url: string;
  user?: string;
  password?: string;
  from: string;
  to: string[];
}

/** Sends the mail; returns the server's answer to the message. */
export async function sendEmail(
  smtp: SmtpSettings,
  message: MailMessage,
  options: { timeoutMs: number; allowedHosts?: readonly string[] },
): Promise<string> {
  const url = new URL(smtp.url);
  if (!hostAllowed(url.hostname, options.allowedHosts)) {
    throw new DeliveryError(`host ${url.hostname} is not in PORTER_NOTIFY_ALLOWED_HOSTS`, true);
  }
  const secure = url.protocol === 'smtps:';
  // loaded by the first mail: a worker that never sends one never loads it
  const { createTransport } = await import('nodemailer');
  const transport = createTransport({
    host: url.hostname,
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    ...(smtp.user !== undefined ? { auth: { user: smtp.user, pass: smtp.password ?? '' } } : {}),
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  try {
    const info = await transport.sendMail({
      from: smtp.from,
      to: smtp.to,
      subject: message.subject,
      text: message.text,
      messageId: message.messageId,
    });
    return String(info.response ?? 'sent');
  } catch (error) {
    const code = (error as { code?: string; responseCode?: number }).code;
    const responseCode = (error as { responseCode?: number }).responseCode;
    // a 5xx to the message itself (a refused recipient) is not mended by sending it again
    const permanent = responseCode !== undefined && responseCode >= 500 && code !== 'EAUTH';
    const what = responseCode !== undefined ? `SMTP ${responseCode}` : (code ?? 'no answer');
    throw new DeliveryError(`mail to ${url.hostname} failed: ${what}`, permanent, responseCode);
  } finally {
    transport.close();
  }
}
