// A real local on-call receiver with every contact point's far end, each checking the shape its real
// counterpart accepts and answering as it would: Slack incoming webhooks (POST /slack/<channel>),
// PagerDuty's Events API v2 (POST /pagerduty/v2/enqueue, keeping each incident's state by dedup_key),
// Sluice's webhook event (POST /oncall/hooks/<name>) and an SMTP server (smtp-server, mails parsed with
// mailparser). Everything received is listed at GET / (a page a person can open) and GET /pages.json.
// Given `verify`, it checks each HTTP request's signature first, as a careful receiver does, and
// answers 401 with the reason to one that does not verify (recorded nowhere).
// The integration tests, the browser tests and the quick start's demo receiver all use it.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { checkPagerDutyEvent } from "./check-pagerduty-event";
import { checkSlackMessage } from "./check-slack-message";
import { renderPagesHtml } from "./render-pages-html";
import type { TChannel, TReceivedPage } from "./received-page";

export interface TOnCallReceiver {
  httpUrl: string;
  smtpUrl: string;
  pages: TReceivedPage[];
  /** PagerDuty incidents by dedup_key: their state after every event so far. */
  incidents: Map<string, { state: "triggered" | "acknowledged" | "resolved"; events: string[] }>;
  /** The next request on this channel gets this answer instead (retries and refusals in tests). */
  answerNext(
    channel: Exclude<TChannel, "email">,
    answer: { status: number; body?: string; headers?: Record<string, string> },
  ): void;
  close(): Promise<void>;
}

export async function startOnCallReceiver(
  opts: {
    httpPort?: number;
    smtpPort?: number;
    host?: string;
    /** Another receiver on the same port (the demo's fraud webhook): true when it answered. */
    otherRoutes?: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => boolean;
    /** Why a request's signature does not verify (the raw body as received), or undefined when it does. */
    verify?: (body: string, headers: http.IncomingHttpHeaders) => string | undefined;
  } = {},
): Promise<TOnCallReceiver> {
  const host = opts.host ?? "127.0.0.1";
  const pages: TReceivedPage[] = [];
  const incidents: TOnCallReceiver["incidents"] = new Map();
  const planned = new Map<string, { status: number; body?: string; headers?: Record<string, string> }[]>();
  const record = (p: Omit<TReceivedPage, "n" | "at">) =>
    pages.push({ n: pages.length + 1, at: new Date().toISOString(), ...p });

  const server = http.createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (raw += c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://receiver");
      if (req.method === "GET" && url.pathname === "/pages.json") {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ pages, incidents: Object.fromEntries(incidents) }));
        return;
      }
      if (req.method === "GET" && url.pathname === "/") {
        res
          .writeHead(200, { "content-type": "text/html; charset=utf-8" })
          .end(renderPagesHtml(pages, incidents));
        return;
      }
      if (opts.otherRoutes?.(req, raw, res)) return;
      const route = /^\/(slack|oncall\/hooks)\/([\w.#-]+)$/.exec(url.pathname);
      const channel: Exclude<TChannel, "email"> | null =
        url.pathname === "/pagerduty/v2/enqueue"
          ? "pagerduty"
          : route?.[1] === "slack"
            ? "slack"
            : route
              ? "webhook"
              : null;
      if (req.method !== "POST" || !channel) {
        res
          .writeHead(404, { "content-type": "text/plain" })
          .end("POST /slack/<channel>, /pagerduty/v2/enqueue or /oncall/hooks/<name>");
        return;
      }
      const unverified = opts.verify?.(raw, req.headers);
      if (unverified !== undefined) {
        res.writeHead(401, { "content-type": "text/plain" }).end(`signature does not verify: ${unverified}`);
        return;
      }
      const next = planned.get(channel)?.shift();
      if (next) {
        res.writeHead(next.status, { "content-type": "text/plain", ...next.headers }).end(next.body ?? "");
        return;
      }
      if (channel === "slack") {
        const check = checkSlackMessage(raw);
        if (!check.ok)
          return void res.writeHead(check.status, { "content-type": "text/plain" }).end(check.body);
        const msg = JSON.parse(raw) as { text: string };
        record({
          channel,
          to: `#${route![2]}`,
          action: /^\[([A-Z ]+)\]/.exec(msg.text)?.[1] ?? "message",
          key: "",
          summary: msg.text,
          body: msg,
        });
        return void res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      }
      if (channel === "pagerduty") {
        const check = checkPagerDutyEvent(raw);
        if (check.event) {
          const e = check.event;
          const incident = incidents.get(e.dedup_key) ?? { state: "triggered" as const, events: [] };
          // PagerDuty: acknowledge / resolve of an unknown or resolved incident changes nothing.
          if (e.event_action === "trigger" && incident.state !== "acknowledged") incident.state = "triggered";
          if (
            e.event_action === "acknowledge" &&
            incident.events.length > 0 &&
            incident.state === "triggered"
          )
            incident.state = "acknowledged";
          if (e.event_action === "resolve" && incident.events.length > 0) incident.state = "resolved";
          incident.events.push(e.event_action);
          incidents.set(e.dedup_key, incident);
          const summary = String(
            (e.payload as { summary?: string } | undefined)?.summary ?? `${e.event_action} ${e.dedup_key}`,
          );
          record({
            channel,
            to: `routing key ${e.routing_key.slice(0, 6)}…`,
            action: e.event_action,
            key: e.dedup_key,
            summary,
            body: { ...e, routing_key: "(hidden)" },
          });
        }
        return void res
          .writeHead(check.status, { "content-type": "application/json" })
          .end(JSON.stringify(check.body));
      }
      const key = String(req.headers["x-sluice-notification"] ?? "");
      let event: { type?: unknown; text?: unknown; alert?: { id?: unknown } };
      try {
        event = JSON.parse(raw) as typeof event;
      } catch {
        return void res.writeHead(400, { "content-type": "text/plain" }).end("not JSON");
      }
      if (
        !key ||
        typeof event.type !== "string" ||
        typeof event.text !== "string" ||
        typeof event.alert?.id !== "string"
      )
        return void res
          .writeHead(400, { "content-type": "text/plain" })
          .end("expected Sluice's webhook event (type, text, alert.id) with X-Sluice-Notification");
      const repeat = pages.some((p) => p.channel === "webhook" && p.key === key);
      if (!repeat)
        record({ channel, to: route![2]!, action: event.type, key, summary: event.text, body: event });
      return void res
        .writeHead(200, { "content-type": "text/plain" })
        .end(repeat ? "repeat, not applied again" : "ok");
    });
  });
  server.listen(opts.httpPort ?? 0, host);
  await new Promise<void>((resolve, reject) => server.once("listening", resolve).once("error", reject));

  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onRcptTo(address, _session, done) {
      // A mailbox that does not exist, for permanent-failure tests.
      if (address.address.endsWith("@refused.invalid"))
        return done(Object.assign(new Error("5.1.1 no such mailbox"), { responseCode: 550 }));
      done();
    },
    onData(stream, session, done) {
      simpleParser(stream)
        .then((mail) => {
          const subject = mail.subject ?? "";
          record({
            channel: "email",
            to: session.envelope.rcptTo.map((r) => r.address).join(", "),
            action: /^\[([A-Z ]+)\]/.exec(subject)?.[1] ?? "message",
            key: mail.messageId ?? "",
            summary: subject,
            body: {
              subject,
              from: mail.from?.text,
              text: mail.text,
              html: typeof mail.html === "string" ? mail.html : null,
              inReplyTo: mail.inReplyTo ?? null,
              references: mail.references ?? null,
            },
          });
          done();
        })
        .catch((err: Error) => done(err));
    },
  });
  smtp.listen(opts.smtpPort ?? 0, host);
  await new Promise<void>((resolve, reject) => smtp.server.once("listening", resolve).once("error", reject));

  return {
    httpUrl: `http://${host}:${(server.address() as AddressInfo).port}`,
    smtpUrl: `smtp://${host}:${(smtp.server.address() as AddressInfo).port}`,
    pages,
    incidents,
    answerNext(channel, answer) {
      planned.set(channel, [...(planned.get(channel) ?? []), answer]);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await new Promise((resolve) => smtp.close(() => resolve(undefined)));
    },
  };
}
