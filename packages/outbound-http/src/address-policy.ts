// Which addresses Sluice may send a request to. Only public unicast addresses by default: loopback,
// private (RFC 1918, unique-local), link-local (the cloud metadata service at 169.254.169.254),
// carrier-grade NAT, multicast, reserved, unspecified and IPv4-mapped forms of those are refused, so
// a webhook URL cannot make the workers or the console call Postgres, Redis or a metadata endpoint.
// Receivers that really are internal are allowed explicitly (SLUICE_OUTBOUND_ALLOW): an address or a
// CIDR range, optionally with one port — `127.0.0.1:4010` allows that port only.
import ipaddr from "ipaddr.js";

export interface TAllowEntry {
  /** As written, for messages. */
  text: string;
  range: [ipaddr.IPv4 | ipaddr.IPv6, number];
  /** Only this port; any port when absent. */
  port?: number;
}

/** Parses SLUICE_OUTBOUND_ALLOW: comma-separated `10.0.0.0/8`, `127.0.0.1:4010`, `[::1]:8080`, `fd00::/8`. */
export function parseAllowlist(text: string | undefined): TAllowEntry[] {
  return (text ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map(parseEntry);
}

function parseEntry(text: string): TAllowEntry {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const v4WithPort = /^([\d.]+(?:\/\d+)?):(\d+)$/.exec(text);
  const [address, port] = bracketed
    ? [bracketed[1]!, bracketed[2]]
    : v4WithPort
      ? [v4WithPort[1]!, v4WithPort[2]]
      : [text, undefined];
  let range: [ipaddr.IPv4 | ipaddr.IPv6, number];
  try {
    range = address.includes("/")
      ? ipaddr.parseCIDR(address)
      : (() => {
          const ip = ipaddr.parse(address);
          return [ip, ip.kind() === "ipv4" ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number];
        })();
  } catch {
    throw new Error(
      `SLUICE_OUTBOUND_ALLOW: ${JSON.stringify(text)} is not an address or CIDR range (optionally with :port), e.g. 127.0.0.1:4010, 10.20.0.0/16, [fd00::5]:8443`,
    );
  }
  const portNumber = port === undefined ? undefined : Number(port);
  if (portNumber !== undefined && !(portNumber >= 1 && portNumber <= 65535))
    throw new Error(`SLUICE_OUTBOUND_ALLOW: ${JSON.stringify(text)} has a port outside 1–65535`);
  return { text, range, ...(portNumber !== undefined ? { port: portNumber } : {}) };
}

/** Why a connection to `address:port` is refused, or undefined when it is allowed. */
export function addressRefusal(
  address: string,
  port: number,
  allow: readonly TAllowEntry[],
): string | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return `${address} is not an IP address`;
  }
  // ::ffff:127.0.0.1 is 127.0.0.1: judge (and allow) the IPv4 address it stands for.
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress())
    ip = (ip as ipaddr.IPv6).toIPv4Address();
  const allowed = allow.some(
    (e) => e.range[0].kind() === ip.kind() && ip.match(e.range) && (e.port === undefined || e.port === port),
  );
  if (allowed) return undefined;
  const range = ip.range();
  if (range === "unicast") return undefined;
  return `${ip.toString()} is ${describeRange(range)}, which Sluice does not send to unless SLUICE_OUTBOUND_ALLOW lists it (e.g. ${ip.kind() === "ipv6" ? `[${ip.toString()}]` : ip.toString()}:${port})`;
}

function describeRange(range: string): string {
  switch (range) {
    case "loopback":
      return "a loopback address (this machine)";
    case "private":
    case "uniqueLocal":
      return "a private network address";
    case "linkLocal":
      return "a link-local address (cloud metadata services live there)";
    case "carrierGradeNat":
      return "a carrier-grade NAT address";
    case "unspecified":
      return "the unspecified address";
    case "multicast":
    case "broadcast":
      return `a ${range} address`;
    default:
      return `a reserved address (${range})`;
  }
}
