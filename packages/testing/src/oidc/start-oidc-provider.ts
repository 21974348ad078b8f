// Start the test identity provider as a child process and wait until it says where it listens.
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const PROCESS = path.join(path.dirname(fileURLToPath(import.meta.url)), "oidc-provider-process.ts");

export interface TRunningOidcProvider {
  issuer: string;
  stop(): Promise<void>;
}

export function startOidcProvider(opts: {
  port?: number;
  redirectUris: string[];
}): Promise<TRunningOidcProvider> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", PROCESS, String(opts.port ?? 0), opts.redirectUris.join(",")],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the test OIDC provider did not start within 30 s:\n${output}`)),
      30_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const issuer = /oidc-provider listening (\S+)/.exec(output)?.[1];
      if (!issuer) return;
      clearTimeout(timer);
      resolve({
        issuer,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once("exit", () => done());
            child.kill("SIGTERM");
          }),
      });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the test OIDC provider exited (${code}):\n${output}`));
    });
  });
}
