// An HTTP agent that checks the address it actually connects to (address-policy.ts). The check runs
// inside the connection: on an IP literal before connecting, on a host name on every address DNS gave
// for this very connection — so a name that resolved to a public address when a URL was saved and to
// 127.0.0.1 now (DNS rebinding) is refused, and pooled connections were all checked when opened.
import dns from "node:dns";
import net from "node:net";
import { Agent, buildConnector } from "undici";
import { addressRefusal, type TAllowEntry } from "./address-policy";

/** A request refused before any byte was sent: the receiver's address is not allowed. */
export class OutboundRefusedError extends Error {
  readonly code = "SLUICE_OUTBOUND_REFUSED";
}

type TLookup = typeof dns.lookup;
type TAddress = { address: string; family: number };

export function guardedAgent(allow: readonly TAllowEntry[], lookup: TLookup = dns.lookup): Agent {
  const connect: buildConnector.connector = (opts, callback) => {
    const port = Number(opts.port) || (opts.protocol === "https:" ? 443 : 80);
    const host = opts.hostname.replace(/^\[(.*)\]$/, "$1");
    if (net.isIP(host)) {
      const refusal = addressRefusal(host, port, allow);
      if (refusal) return callback(new OutboundRefusedError(refusal), null);
      return buildConnector({})({ ...opts, hostname: host }, callback);
    }
    buildConnector({ lookup: checkedLookup(lookup, opts.hostname, port, allow) })(opts, callback);
  };
  return new Agent({ connect });
}

function checkedLookup(lookup: TLookup, hostname: string, port: number, allow: readonly TAllowEntry[]) {
  return ((name: string, options: dns.LookupOptions, cb: (...args: unknown[]) => void) => {
    lookup(name, { ...options, all: true }, (err, found) => {
      if (err) return cb(err);
      const addresses = found as unknown as TAddress[];
      // One refused address refuses the name: which of them a connection ends up using is not ours to pick.
      for (const a of addresses) {
        const refusal = addressRefusal(a.address, port, allow);
        if (refusal) return cb(new OutboundRefusedError(`${hostname} resolves to ${refusal}`));
      }
      if (options.all) return cb(null, addresses);
      const first = addresses[0];
      if (!first) return cb(new OutboundRefusedError(`${hostname} resolves to no address`));
      cb(null, first.address, first.family);
    });
  }) as unknown as TLookup;
}
