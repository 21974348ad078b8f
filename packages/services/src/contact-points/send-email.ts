// Email over SMTP with nodemailer: the workers' SMTP server comes from SLUICE_SMTP_URL (e.g.
// smtp://user:password@smtp.example.com:587; STARTTLS when the server offers it) and the sender from
// SLUICE_SMTP_FROM. A 5xx reply (mailbox unknown, relaying denied) is permanent; a 4xx reply or a
// connection error is retried like any failed delivery.
import nodemailer from "nodemailer";
import type { TEmailMessage } from "./email-message";

export interface TSmtpOptions {
  url: string;
  from: string;
}

export type TEmailAnswer =
  | { ok: true; response: string }
  | { ok: false; error: string; permanent: boolean; responseCode: number | null };

export async function sendEmail(
  smtp: TSmtpOptions,
  to: string[],
  message: TEmailMessage,
): Promise<TEmailAnswer> {
  const transport = nodemailer.createTransport(smtpTransportOptions(smtp.url));
  try {
    const info = await transport.sendMail({
      from: smtp.from,
      to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      messageId: message.messageId,
      ...(message.inReplyTo ? { inReplyTo: message.inReplyTo, references: [message.inReplyTo] } : {}),
    });
    if (info.rejected.length > 0)
      return {
        ok: false,
        error: `SMTP server refused ${info.rejected.map(String).join(", ")}`,
        permanent: true,
        responseCode: null,
      };
    return { ok: true, response: String(info.response ?? "").slice(0, 200) };
  } catch (err) {
    const e = err as { message?: string; responseCode?: number; code?: string };
    const code = typeof e.responseCode === "number" ? e.responseCode : null;
    return {
      ok: false,
      error: `SMTP ${code ?? e.code ?? "error"}: ${String(e.message ?? err).slice(0, 300)}`,
      permanent: code !== null && code >= 500,
      responseCode: code,
    };
  } finally {
    transport.close();
  }
}

/** smtp://[user:password@]host[:port] (STARTTLS when offered) or smtps:// (TLS from the start). */
export function smtpTransportOptions(url: string) {
  const u = new URL(url);
  const secure = u.protocol === "smtps:";
  return {
    host: u.hostname,
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    ...(u.username
      ? { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } }
      : {}),
    connectionTimeout: 5_000,
    greetingTimeout: 5_000,
    socketTimeout: 10_000,
  };
}
