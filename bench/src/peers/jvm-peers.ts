// The peers' JVM side: building bench/peers with Maven when its jars are missing or older than its
// sources, and the command lines of the Flink and Spark jobs. Java and Maven are needed only here:
// nothing in `npm test` builds or runs the peers.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

export type JvmPeer = "flink" | "spark";

export function peersDir(repoRoot: string): string {
  return path.join(repoRoot, "bench/peers");
}

const jarOf = (dir: string, peer: JvmPeer) => path.join(dir, peer, "target", `peers-${peer}-1.jar`);

function newestSource(dir: string): number {
  let newest = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name === "target") continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  walk(dir);
  return newest;
}

/**
 * `mvn -q package` in bench/peers unless the last successful build (a stamp file it leaves) is newer
 * than every source; says what to install when Maven is missing. (Not the jars' own times: Maven
 * leaves a jar untouched when its module did not change.)
 */
export function buildPeers(repoRoot: string, log: (line: string) => void): void {
  const dir = peersDir(repoRoot);
  const stamp = path.join(dir, "common", "target", ".built");
  const built = (["flink", "spark"] as const).every((p) => existsSync(jarOf(dir, p))) && existsSync(stamp);
  if (built && statSync(stamp).mtimeMs > newestSource(dir)) return;
  log("building bench/peers with Maven (the first build downloads Flink and Spark, a few minutes)…");
  try {
    execFileSync("mvn", ["-q", "-B", "package", "-DskipTests"], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (err) {
    const e = err as { code?: string; stdout?: Buffer; stderr?: Buffer };
    if (e.code === "ENOENT")
      throw new Error(
        "the peers need Maven and Java 17: apt-get install -y maven openjdk-17-jdk-headless, or run with --peers sluice",
      );
    throw new Error(
      `mvn package in bench/peers failed:\n${e.stdout?.toString() ?? ""}${e.stderr?.toString() ?? ""}`,
    );
  }
  writeFileSync(stamp, new Date().toISOString());
}

// What Flink's and Spark's own launch scripts pass on Java 17 (both reach into JDK internals).
const JAVA_OPENS = [
  "java.base/java.lang",
  "java.base/java.lang.invoke",
  "java.base/java.lang.reflect",
  "java.base/java.io",
  "java.base/java.net",
  "java.base/java.nio",
  "java.base/java.text",
  "java.base/java.time",
  "java.base/java.util",
  "java.base/java.util.concurrent",
  "java.base/java.util.concurrent.atomic",
  "java.base/java.util.concurrent.locks",
  "java.base/sun.nio.ch",
  "java.base/sun.nio.cs",
  "java.base/sun.security.action",
  "java.base/sun.util.calendar",
].map((m) => `--add-opens=${m}=ALL-UNNAMED`);

/** `java … <main> name=value…` for one peer. */
export function javaCommand(
  repoRoot: string,
  peer: JvmPeer,
  args: Record<string, string | number>,
): string[] {
  const dir = path.join(peersDir(repoRoot), peer, "target");
  return [
    ...JAVA_OPENS,
    "-Djdk.reflect.useDirectMethodHandle=false",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Duser.timezone=UTC",
    // Flink logs through slf4j-simple: warnings and errors only (Spark's level is in its log4j2.properties).
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-cp",
    `${path.join(dir, `peers-${peer}-1.jar`)}:${path.join(dir, "lib", "*")}`,
    `dev.sluice.peers.${peer}.SettlementsJob`,
    ...Object.entries(args).map(([k, v]) => `${k}=${v}`),
  ];
}

/**
 * A libpq URL (postgresql://user:password@host:port/db) as a JDBC URL without its password, which
 * goes to the job in PGPASSWORD instead (never on a command line, where `ps` shows it).
 */
export function jdbcFor(databaseUrl: string): { url: string; env: Record<string, string> } {
  const u = new URL(databaseUrl);
  const user = encodeURIComponent(decodeURIComponent(u.username || "postgres"));
  return {
    url: `jdbc:postgresql://${u.hostname}:${u.port || 5432}${u.pathname}?user=${user}`,
    env: u.password ? { PGPASSWORD: decodeURIComponent(u.password) } : {},
  };
}
